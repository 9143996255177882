/* SPDX-License-Identifier: MIT */
/*
 * ashmem_rules.c - the ashmem driver's rules (see ashmem_rules.h).
 */
#include "ashmem_rules.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

/* _IOC(dir, 0x77, nr, size) as Linux encodes it on x86, arm and most others */
#define IOC(dir, nr, size) (((uint32_t)(dir) << 30) | ((uint32_t)(size) << 16) | (0x77u << 8) | (nr))
#define W 1u
#define R 2u

static const struct {
	uint32_t req;
	enum vl_ash_cmd cmd;
	unsigned compat, argsize;
} requests[] = {
	{ IOC(W, 1, 256), VL_ASH_SET_NAME, 0, 256 },
	{ IOC(R, 2, 256), VL_ASH_GET_NAME, 0, 256 },
	{ IOC(W, 3, 8), VL_ASH_SET_SIZE, 0, 8 },
	{ IOC(W, 3, 4), VL_ASH_SET_SIZE, 1, 4 },
	{ IOC(0, 4, 0), VL_ASH_GET_SIZE, 0, 0 },
	{ IOC(W, 5, 8), VL_ASH_SET_PROT_MASK, 0, 8 },
	{ IOC(W, 5, 4), VL_ASH_SET_PROT_MASK, 1, 4 },
	{ IOC(0, 6, 0), VL_ASH_GET_PROT_MASK, 0, 0 },
	{ IOC(W, 7, 8), VL_ASH_PIN, 0, 8 },
	{ IOC(W, 8, 8), VL_ASH_UNPIN, 0, 8 },
	{ IOC(0, 9, 0), VL_ASH_GET_PIN_STATUS, 0, 8 },
	{ IOC(0, 10, 0), VL_ASH_PURGE_ALL_CACHES, 0, 0 },
	{ IOC(R, 11, 8), VL_ASH_GET_FILE_ID, 0, 8 },
	{ IOC(R, 11, 4), VL_ASH_GET_FILE_ID, 1, 4 },
};

enum vl_ash_cmd vl_ash_decode(unsigned long req, struct vl_ash_req *out)
{
	uint32_t r = (uint32_t)req;

	memset(out, 0, sizeof(*out));
	if (!vl_ash_type(req)) {
		out->cmd = VL_ASH_NOT_OURS;
		return out->cmd;
	}
	out->cmd = VL_ASH_UNKNOWN;
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		if (requests[i].req == r) {
			out->cmd = requests[i].cmd;
			out->compat = requests[i].compat;
			out->argsize = requests[i].argsize;
			break;
		}
	}
	return out->cmd;
}

uint64_t vl_ash_arg_value(const struct vl_ash_req *q, unsigned long arg)
{
	return q->compat ? (uint64_t)(uint32_t)arg : (uint64_t)arg;
}

static uint64_t page_up(uint64_t v, uint64_t page)
{
	return (v + page - 1) & ~(page - 1);
}

int vl_ash_pin_range(uint32_t off, uint32_t len, uint64_t size, uint64_t page, uint64_t *s,
		     uint64_t *e)
{
	uint64_t rounded = page_up(size, page);

	/* the driver computes this in size_t and keeps 32 bits of it */
	if (len == 0)
		len = (uint32_t)(rounded - off);
	if (((uint64_t)off | len) & (page - 1))
		return -EINVAL;
	if (UINT32_MAX - off < len)
		return -EINVAL;
	if (rounded < (uint64_t)off + len)
		return -EINVAL;
	*s = off;
	*e = (uint64_t)off + len;
	return 0;
}

int vl_ash_set_prot(uint32_t cur, uint64_t want, int read_implies_exec, uint32_t *out)
{
	if ((cur & want) != want)
		return -EINVAL;
	if ((want & 0x1u) && read_implies_exec)
		want |= 0x4u;
	*out = (uint32_t)want;
	return 0;
}

uint32_t vl_ash_prot_sealed(uint32_t mask, int seals)
{
	if (seals > 0 && ((uint32_t)seals & (VL_SEAL_WRITE | VL_SEAL_FUTURE_WRITE)))
		return mask & ~(uint32_t)PROT_WRITE;
	return mask;
}

int vl_ash_mmap_check(const struct vl_ashmem *a, int prot, uint64_t len, uint64_t page)
{
	/* the driver's order: no size, too long, then the mask */
	if (a->size == 0)
		return -EINVAL;
	if (len > page_up(a->size, page))
		return -EINVAL;
	if ((uint32_t)prot & VL_ASH_PROT_ALL & ~a->prot)
		return -EPERM;
	return 0;
}

int vl_ash_map_readonly(const struct vl_ashmem *a, int flags)
{
	int type = flags & MAP_TYPE;

	return (type == MAP_SHARED || type == MAP_SHARED_VALIDATE) && !(a->prot & PROT_WRITE);
}

int vl_ash_settable(const struct vl_ashmem *a)
{
	return (a->flags & VL_ASH_MAPPED) ? -EINVAL : 0;
}

void vl_ash_name_set(struct vl_ashmem *a, const char *src, size_t n)
{
	const char *nul = memchr(src, '\0', n);
	size_t len = nul ? (size_t)(nul - src) : n;

	if (len > VL_ASH_NAME_LEN - 1)
		len = VL_ASH_NAME_LEN - 1;
	memcpy(a->name, src, len);
	memset(a->name + len, 0, VL_ASH_NAME_LEN - len);
}

const char *vl_ash_name_get(const struct vl_ashmem *a, size_t *len)
{
	if (a->name[0] == '\0') {
		*len = sizeof(VL_ASH_NAME_DEF);
		return VL_ASH_NAME_DEF;
	}
	*len = strnlen(a->name, VL_ASH_NAME_LEN - 1) + 1;
	return a->name;
}

void vl_ash_memfd_name(const char *name, char *dst, size_t size)
{
	size_t n;

	if (size == 0)
		return;
	if (name == NULL || name[0] == '\0') {
		n = strlen(VL_ASH_NAME_DEF);
		if (n >= size)
			n = size - 1;
		memcpy(dst, VL_ASH_NAME_DEF, n);
		dst[n] = '\0';
		return;
	}
	n = strlen(VL_ASH_NAME_PREFIX);
	if (size > VL_MEMFD_NAME_MAX + 1)
		size = VL_MEMFD_NAME_MAX + 1;
	if (n >= size)
		n = size - 1;
	memcpy(dst, VL_ASH_NAME_PREFIX, n);
	for (size_t i = 0; name[i] != '\0' && n + 1 < size; i++)
		dst[n++] = name[i];
	dst[n] = '\0';
}

void vl_ash_init(struct vl_ashmem *a, uint32_t flags)
{
	memset(a, 0, sizeof(*a));
	a->prot = VL_ASH_PROT_ALL;
	a->flags = flags & VL_ASH_FLAGS;
}

int vl_ash_state_ok(const struct vl_ashmem *a)
{
	return (a->prot & ~VL_ASH_PROT_ALL) == 0 && (a->flags & ~VL_ASH_FLAGS) == 0 &&
	       memchr(a->name, '\0', VL_ASH_NAME_LEN) != NULL;
}

int vl_ash_dev_path(const char *path)
{
	static const char dev[] = VL_ASH_DEV_PATH;

	if (path == NULL || strncmp(path, dev, sizeof(dev) - 1) != 0)
		return 0;
	return strchr(path + sizeof(dev) - 1, '/') == NULL;
}
