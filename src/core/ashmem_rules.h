/* SPDX-License-Identifier: MIT */
/*
 * ashmem_rules.h - the ashmem driver's rules, as pure functions: which
 * ioctl a request number is (both ABIs), what PIN/UNPIN/GET_PIN_STATUS
 * make of their arguments, what SET_PROT_MASK may do, what mmap may ask
 * for, names. No I/O: the unit tests call these directly.
 */
#ifndef VL_ASHMEM_RULES_H
#define VL_ASHMEM_RULES_H

#include "layout.h"

#include <stddef.h>
#include <stdint.h>

#define VL_ASH_MAGIC 0x77
#define VL_ASH_PROT_ALL 0x7u /* PROT_READ | PROT_WRITE | PROT_EXEC */
#define VL_ASH_NAME_DEF "dev/ashmem"
#define VL_ASH_NAME_PREFIX "dev/ashmem/"
#define VL_ASH_DEV_PATH "/dev/ashmem"
/* memfd_create's limit: NAME_MAX less "memfd:" */
#define VL_MEMFD_NAME_MAX 249

enum vl_ash_cmd {
	VL_ASH_NOT_OURS = 0, /* another driver's type: not an ashmem request */
	VL_ASH_UNKNOWN,      /* type 0x77, but no such request: ENOTTY */
	VL_ASH_SET_NAME,
	VL_ASH_GET_NAME,
	VL_ASH_SET_SIZE,
	VL_ASH_GET_SIZE,
	VL_ASH_SET_PROT_MASK,
	VL_ASH_GET_PROT_MASK,
	VL_ASH_PIN,
	VL_ASH_UNPIN,
	VL_ASH_GET_PIN_STATUS,
	VL_ASH_PURGE_ALL_CACHES,
	VL_ASH_GET_FILE_ID,
};

struct vl_ash_req {
	enum vl_ash_cmd cmd;
	unsigned compat;   /* 1: the 32-bit encoding (size_t and long are 4 bytes) */
	unsigned argsize;  /* bytes GET_FILE_ID writes; value width of SET_SIZE/SET_PROT_MASK */
};

/* The cheap test every ioctl goes through: is the request of type 0x77? */
static inline int vl_ash_type(unsigned long req)
{
	return (((uint32_t)req >> 8) & 0xffu) == VL_ASH_MAGIC;
}

/*
 * Decode a request number (the kernel sees 32 bits of it). Both the
 * 64-bit and the 32-bit encodings are accepted, in any process.
 */
enum vl_ash_cmd vl_ash_decode(unsigned long req, struct vl_ash_req *out);

/* The value argument of SET_SIZE / SET_PROT_MASK, as wide as its encoding. */
uint64_t vl_ash_arg_value(const struct vl_ash_req *q, unsigned long arg);

/*
 * PIN, UNPIN, GET_PIN_STATUS of struct ashmem_pin {off, len} on a region
 * of `size` bytes: len 0 means to the end of the (page-rounded) region;
 * offset and len must be page-aligned, must not wrap 32 bits, and must end
 * within the page-rounded size. 0 and [*s, *e) (possibly empty), or -EINVAL.
 */
int vl_ash_pin_range(uint32_t off, uint32_t len, uint64_t size, uint64_t page, uint64_t *s,
		     uint64_t *e);

/*
 * SET_PROT_MASK: bits may only be removed (-EINVAL otherwise); with
 * read_implies_exec (the READ_IMPLIES_EXEC personality), PROT_READ brings
 * PROT_EXEC along. 0 and *out.
 */
int vl_ash_set_prot(uint32_t cur, uint64_t want, int read_implies_exec, uint32_t *out);

/* The memfd seals that stop writes (F_SEAL_WRITE, F_SEAL_FUTURE_WRITE), as the kernel numbers them */
#define VL_SEAL_WRITE 0x0008u
#define VL_SEAL_FUTURE_WRITE 0x0010u

/*
 * The mask GET_PROT_MASK answers, and SET_PROT_MASK may only take bits
 * from: the region's mask, without PROT_WRITE when the memfd's seals
 * (F_GET_SEALS; negative: not known) stop writes, as the kernel answers
 * for a memfd sealed so and libcutils' memfd backend reads it.
 */
uint32_t vl_ash_prot_sealed(uint32_t mask, int seals);

/*
 * May a region in state a be mapped with prot for len bytes? 0, -EINVAL
 * (no size yet, or longer than the page-rounded size), -EPERM (prot asks
 * for a bit the mask lacks), checked in that order, as the driver did.
 */
int vl_ash_mmap_check(const struct vl_ashmem *a, int prot, uint64_t len, uint64_t page);

/*
 * Must a mapping with these mmap flags be made through a read-only fd?
 * Yes for a shared mapping of a region whose mask lacks PROT_WRITE: the
 * driver took the bit out of the mapping's allowed ones, so mprotect
 * could not add it later, and the kernel does the same for a shared
 * mapping of an fd not open for writing.
 */
int vl_ash_map_readonly(const struct vl_ashmem *a, int flags);

/* SET_NAME and SET_SIZE: only before the first mmap. 0 or -EINVAL. */
int vl_ash_settable(const struct vl_ashmem *a);

/*
 * SET_NAME: the name as the driver keeps it, cut to ASHMEM_NAME_LEN - 1
 * bytes. src holds n bytes, NUL-terminated within them or not.
 */
void vl_ash_name_set(struct vl_ashmem *a, const char *src, size_t n);

/* GET_NAME: the name, or "dev/ashmem" if none; *len counts the NUL. */
const char *vl_ash_name_get(const struct vl_ashmem *a, size_t *len);

/* The memfd's name: "dev/ashmem/NAME", or "dev/ashmem"; cut to fit memfd_create. */
void vl_ash_memfd_name(const char *name, char *dst, size_t size);

/* A fresh region's state. */
void vl_ash_init(struct vl_ashmem *a, uint32_t flags);

/* Is a state read from shared memory sound? (name terminated, known bits) */
int vl_ash_state_ok(const struct vl_ashmem *a);

/* Is path the ashmem device: "/dev/ashmem", or it followed by a suffix without '/'? */
int vl_ash_dev_path(const char *path);

#endif
