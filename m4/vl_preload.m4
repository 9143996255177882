# SPDX-License-Identifier: MIT
# vl_preload.m4 - where `volatile run` preloads the library from.
#
# `volatile run` preloads PRELOADDIR/$LIB/libvolatile.so.0 (PRELOADDIR:
# $(pkglibdir)/preload, src/preload in the build tree). ld.so expands $LIB
# to the directory name of its own ABI (lib/x86_64-linux-gnu on Debian's
# amd64, lib32 for its i386 libc6-i386, lib64 on Fedora): the native name
# links to the library, and each name another ABI of this machine's family
# may give is an empty shared object of that ABI, which its ld.so loads
# without a word (a missing or wrong-class object gets an error on stderr).
# VL_DST_LIB is the native name, from this ld.so itself (the search path
# it reports for LD_LIBRARY_PATH=/vl-probe/$LIB); empty where it cannot be
# told (cross-compiling, a libc without dlinfo): run then preloads
# $(libdir)/libvolatile.so.0 as before. VL_PRELOAD_STUBS lists FLAG=NAME:
# an empty object built with $CC FLAG -nostdlib -shared goes in NAME.
#
# VL_PRELOAD_DIRS sets the shell variables VL_DST_LIB and VL_PRELOAD_STUBS;
# configure.ac defines and substitutes them.
AC_DEFUN([VL_PRELOAD_DIRS], [
AC_CACHE_CHECK([the directory name ld.so gives \$LIB], [vl_cv_dst_lib], [
  vl_cv_dst_lib=no
  AS_IF([test "$cross_compiling" != yes], [
    cat >conftest-dst.c <<_VL_EOF
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
	void *self = dlopen(NULL, RTLD_NOW);
	Dl_serinfo size, *info;
	const char *best = NULL;
	unsigned int i;

	if (self == NULL || dlinfo(self, RTLD_DI_SERINFOSIZE, &size) != 0)
		return 1;
	info = malloc(size.dls_size);
	if (info == NULL || dlinfo(self, RTLD_DI_SERINFOSIZE, info) != 0 ||
	    dlinfo(self, RTLD_DI_SERINFO, info) != 0)
		return 1;
	for (i = 0; i < info->dls_cnt; i++) {
		const char *d = info->dls_serpath[[i]].dls_name;

		if (strncmp(d, "/vl-probe/", 10) == 0 && d[[10]] != '\0' &&
		    (best == NULL || strlen(d) < strlen(best)))
			best = d;
	}
	if (best != NULL) {
		printf("%s\n", best + 10);
		fflush(stdout);
	}
	free(info); /* LeakSanitizer checks this too, in a sanitizer build */
	return best == NULL;
}
_VL_EOF
    AS_IF([$CC $CFLAGS $CPPFLAGS $LDFLAGS -o conftest-dst conftest-dst.c $LIBS >&AS_MESSAGE_LOG_FD 2>&1],
      [vl_dst=`LD_LIBRARY_PATH='/vl-probe/$LIB' ./conftest-dst 2>&AS_MESSAGE_LOG_FD`
       # a relative path of plain names, nothing ld.so or make would expand
       AS_CASE([$vl_dst],
         [""|/*|*..*|*//*|*/|*[[!A-Za-z0-9._/+-]]*], [],
         [vl_cv_dst_lib=$vl_dst])])
    rm -f conftest-dst.c conftest-dst])])
VL_DST_LIB=
VL_PRELOAD_STUBS=
AS_IF([test "x$vl_cv_dst_lib" != xno], [
  VL_DST_LIB=$vl_cv_dst_lib
  # ELF class, data, machine: bytes 4, 5, 18, 19 of an object ($[n]: in a
  # macro's body m4 would take $n for the macro's own argument)
  vl_abi_of() { set -- `od -An -tu1 -N20 "$[1]"`; echo "$[5].$[6].${19}.${20}"; }
  AC_MSG_CHECKING([the other ABIs run gives an empty object])
  vl_native=
  AS_IF([$CC -nostdlib -shared -x c /dev/null -o conftest-abi.so >&AS_MESSAGE_LOG_FD 2>&1],
    [vl_native=`vl_abi_of conftest-abi.so`])
  vl_taken=" $VL_DST_LIB "
  for vl_flag in -m32 -mx32 -m64; do
    test -n "$vl_native" || break
    rm -f conftest-abi.so
    $CC $vl_flag -nostdlib -shared -x c /dev/null -o conftest-abi.so >&AS_MESSAGE_LOG_FD 2>&1 || continue
    vl_abi=`vl_abi_of conftest-abi.so`
    test "$vl_abi" = "$vl_native" && continue
    # the names each distribution's ld.so of that ABI gives $LIB
    AS_CASE([$vl_abi],
      [1.1.3.0], [vl_names="lib32 lib/i386-linux-gnu lib"],
      [1.1.62.0], [vl_names="libx32 lib/x86_64-linux-gnux32"],
      [2.1.62.0], [vl_names="lib64 lib/x86_64-linux-gnu lib"],
      [vl_names=])
    for vl_name in $vl_names; do
      AS_CASE([$vl_taken], [*" $vl_name "*], [continue])
      vl_taken="$vl_taken$vl_name "
      VL_PRELOAD_STUBS="$VL_PRELOAD_STUBS $vl_flag=$vl_name"
    done
  done
  rm -f conftest-abi.so
  VL_PRELOAD_STUBS=${VL_PRELOAD_STUBS# }
  AC_MSG_RESULT([${VL_PRELOAD_STUBS:-none}])])
])
