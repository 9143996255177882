/* SPDX-License-Identifier: MIT */
/*
 * sysstatus.c - `volatile status --system`: the users the machine's
 * daemon would serve, and the names it refuses (sysfind.h, DESIGN 22).
 *
 * Every path printed is one the finder spelt from its roots and digits:
 * no byte of a name a user chose reaches the terminal.
 */
#include "cli.h"
#include "sysfind.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void print_refused(const char *path, const char *why, void *ctx)
{
	(void)ctx;
	printf("refused %s: %s\n", path, why);
}

int status_system(const uint32_t *only, int nonly)
{
	static struct vl_sys_user users[VL_SYS_USERS_MAX];
	int n;

	if (geteuid() != 0)
		die("status --system: root only (it looks at every user's default place)");
	n = vl_sys_find(users, VL_SYS_USERS_MAX, only, nonly, print_refused, NULL);
	for (int i = 0; i < n; i++)
		printf("user %u gid %u %s\n", users[i].uid, (unsigned)users[i].gid, users[i].path);
	if (n == 0)
		printf("no user has a region in a default place\n");
	return fflush(stdout) == 0 ? 0 : EXIT_USAGE;
}
