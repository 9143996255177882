/* SPDX-License-Identifier: MIT */
/*
 * abi-prog32 - for tests/shell/run-abi.sh where no 32-bit libc can be
 * linked: a 32-bit x86 program that needs no library, only the i386
 * dynamic loader (it is linked -pie, so ld.so runs and reads LD_PRELOAD).
 * It writes "abi-prog32" and exits 3, with system calls (int $0x80).
 */
	.text
	.globl	_start
_start:
	call	1f
1:	popl	%ecx
	addl	$(msg - 1b), %ecx	/* ecx = msg, wherever we were loaded */
	movl	$4, %eax		/* write(1, msg, len) */
	movl	$1, %ebx
	movl	$(end - msg), %edx
	int	$0x80
	movl	$1, %eax		/* exit(3) */
	movl	$3, %ebx
	int	$0x80

	.section .rodata
msg:	.ascii	"abi-prog32\n"
end:
	.section .note.GNU-stack,"",@progbits
