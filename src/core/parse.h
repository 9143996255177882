/*
 * parse.h - sizes as users write them: "4096", "64K", "16M", "2G".
 */
#ifndef VL_PARSE_H
#define VL_PARSE_H

#include <stdint.h>

/*
 * A size: decimal digits and an optional K, M, G or T (powers of 1024,
 * either case, optionally followed by "B" or "iB"). Returns 0, -EINVAL
 * (not a size) or -ERANGE (more than 2^63-1).
 */
int vl_parse_size(const char *s, uint64_t *out);

/* A threshold: a size, or a percentage "N%" (0-100, *percent set). */
struct vl_threshold {
	uint64_t bytes;
	uint32_t percent;  /* used when is_percent */
	int is_percent;
};
int vl_parse_threshold(const char *s, struct vl_threshold *t);

/* Does the threshold ask for anything (0 and 0% switch a rule off)? */
static inline int vl_threshold_on(const struct vl_threshold *t)
{
	return t->is_percent ? t->percent > 0 : t->bytes > 0;
}

#endif
