/* SPDX-License-Identifier: MIT */
/*
 * elf.c - what an ELF file needs: the DT_NEEDED names of the program exec
 * runs for a command (`volatile run` puts an ASan runtime among them
 * first, run.c). Read with pread, field by field, in either class and
 * either byte order, every offset and size bounded before it is used: the
 * file is the user's and may be anything.
 */
#include "cli.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* an unsigned field of width bytes (1..8) of an ELF file of that byte order */
static uint64_t field(const unsigned char *p, int width, int msb)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < width; i++)
		v |= (uint64_t)p[msb ? width - 1 - i : i] << (8 * i);
	return v;
}

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	if (off > (uint64_t)INT64_MAX - len)
		return -1;
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

#define MAX_PHDRS 256
#define MAX_DYN 4096
#define MAX_NEEDED 64

/*
 * Append to out (size bytes, ':' between names) the names among the
 * DT_NEEDED of the ELF file open as fd, whose first bytes are head, that
 * want() takes.
 * Either class, either byte order; anything amiss ends the look quietly.
 * Over 80 lines: the program headers, the dynamic section and the string
 * table are read in one pass whose bounds checks depend on each other.
 */
static void needed_names(int fd, const unsigned char *head, size_t len,
			 int (*want)(const char *name), char *out, size_t size)
{
	unsigned char *ph = NULL, *dyn = NULL;
	uint64_t phoff, dynoff = 0, dynsz = 0, strtab = 0, strsz = 0, stroff = UINT64_MAX;
	uint64_t needed[MAX_NEEDED];
	unsigned int phentsize, phnum, i, nneeded = 0, dsize;
	int is64, msb, have_dyn = 0;

	if (len < EI_NIDENT || memcmp(head, ELFMAG, SELFMAG) != 0)
		return;
	if (head[EI_CLASS] != ELFCLASS32 && head[EI_CLASS] != ELFCLASS64)
		return;
	if (head[EI_DATA] != ELFDATA2LSB && head[EI_DATA] != ELFDATA2MSB)
		return;
	is64 = head[EI_CLASS] == ELFCLASS64;
	msb = head[EI_DATA] == ELFDATA2MSB;
	if (len < (is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return;
	phoff = is64 ? field(head + 32, 8, msb) : field(head + 28, 4, msb);
	phentsize = (unsigned int)field(head + (is64 ? 54 : 42), 2, msb);
	phnum = (unsigned int)field(head + (is64 ? 56 : 44), 2, msb);
	if (phentsize < (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || phentsize > 256 ||
	    phnum == 0 || phnum > MAX_PHDRS)
		return;
	ph = malloc((size_t)phentsize * phnum);
	if (ph == NULL || read_at(fd, ph, (size_t)phentsize * phnum, phoff) != 0)
		goto out;
	for (i = 0; i < phnum; i++) {
		const unsigned char *p = ph + (size_t)i * phentsize;

		if (field(p, 4, msb) != PT_DYNAMIC)
			continue;
		dynoff = is64 ? field(p + 8, 8, msb) : field(p + 4, 4, msb);
		dynsz = is64 ? field(p + 32, 8, msb) : field(p + 16, 4, msb);
		have_dyn = 1;
		break;
	}
	if (!have_dyn)
		goto out;
	dsize = is64 ? 16 : 8;
	if (dynsz / dsize > MAX_DYN)
		dynsz = (uint64_t)MAX_DYN * dsize;
	dyn = malloc(dynsz + 1);
	if (dyn == NULL || read_at(fd, dyn, dynsz, dynoff) != 0)
		goto out;
	for (i = 0; i < dynsz / dsize; i++) {
		const unsigned char *d = dyn + (size_t)i * dsize;
		uint64_t tag = field(d, dsize / 2, msb), val = field(d + dsize / 2, dsize / 2, msb);

		if (tag == DT_NULL)
			break;
		if (tag == DT_STRTAB)
			strtab = val;
		else if (tag == DT_STRSZ)
			strsz = val;
		else if (tag == DT_NEEDED && nneeded < MAX_NEEDED)
			needed[nneeded++] = val;
	}
	/* DT_STRTAB is an address: the file offset is that of its PT_LOAD */
	for (i = 0; i < phnum; i++) {
		const unsigned char *p = ph + (size_t)i * phentsize;
		uint64_t off, vaddr, filesz;

		if (field(p, 4, msb) != PT_LOAD)
			continue;
		off = is64 ? field(p + 8, 8, msb) : field(p + 4, 4, msb);
		vaddr = is64 ? field(p + 16, 8, msb) : field(p + 8, 4, msb);
		filesz = is64 ? field(p + 32, 8, msb) : field(p + 16, 4, msb);
		if (strtab >= vaddr && strtab - vaddr < filesz) {
			stroff = off + (strtab - vaddr);
			break;
		}
	}
	if (stroff == UINT64_MAX)
		goto out;
	for (i = 0; i < nneeded; i++) {
		char name[NAME_MAX + 1];
		ssize_t got;
		size_t used = strlen(out);

		if (needed[i] >= strsz || stroff > (uint64_t)INT64_MAX - needed[i])
			continue;
		got = pread(fd, name, sizeof(name) - 1, (off_t)(stroff + needed[i]));
		if (got <= 0)
			continue;
		name[got] = '\0';
		if (strlen(name) == (size_t)got || !want(name) ||
		    used + strlen(name) + 2 > size)
			continue;
		snprintf(out + used, size - used, "%s%s", used ? ":" : "", name);
	}
out:
	free(dyn);
	free(ph);
}

void program_needed(const char *cmd, int (*want)(const char *name), char *out, size_t size)
{
	char path[PATH_MAX];
	unsigned char head[256];
	int depth, fd;
	ssize_t n;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s", cmd);
	for (depth = 0; depth < 5; depth++) {
		size_t i, j;

		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		n = pread(fd, head, sizeof(head), 0);
		if (n >= 2 && head[0] == '#' && head[1] == '!') {
			close(fd);
			for (i = 2; i < (size_t)n && (head[i] == ' ' || head[i] == '\t'); i++)
				;
			for (j = i; j < (size_t)n && head[j] != ' ' && head[j] != '\t' &&
				    head[j] != '\n' && head[j] != '\0';
			     j++)
				;
			/* the line ends at the end of a short file too */
			if (j == i || (j == sizeof(head) && n == (ssize_t)sizeof(head)) ||
			    j - i >= sizeof(path))
				return;
			memcpy(path, head + i, j - i);
			path[j - i] = '\0';
			continue;
		}
		if (n > 0)
			needed_names(fd, head, (size_t)n, want, out, size);
		close(fd);
		return;
	}
}
