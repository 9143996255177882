// SPDX-License-Identifier: MIT
//
// gofa - a Go program that uses volatile ranges through raw system calls
// (the Go runtime never calls libc's fallocate: LD_PRELOAD cannot reach
// it). Only `volatile run`'s seccomp supervisor can serve it (DESIGN 1).
// Standard library only; built by make check when configure found go.
//
// It runs the commands given as arguments, in order, printing one line
// per command in the format of tests/helpers/vt.c:
//
//	memfd NAME SIZE    memfd_create(NAME, MFD_ALLOW_SEALING), ftruncate;
//	                   the current fd                  "memfd NAME SIZE = FD"
//	open PATH MODE     open PATH, MODE r, rw, rwc or rwt  "open PATH MODE = FD"
//	fill OFF LEN C     pwrite LEN bytes C (a character, or "zero")
//	expect OFF LEN C   pread and check: "expect OFF LEN C ok" or "... MISMATCH ..."
//	mark OFF LEN       syscall.Fallocate(fd, MARK_VOLATILE, OFF, LEN)
//	unmark OFF LEN     fallocate(2) with UNMARK_VOLATILE, by syscall.Syscall6
//	                   (syscall.Fallocate drops the return value 1)
//	fa MODE OFF LEN    fallocate(2), by syscall.Syscall6
//	                   these print "CMD ARGS = RET" or "CMD ARGS = -1 ENAME"
//	par N              N goroutines, each locked to its own OS thread, mark and
//	                   unmark page i of the current fd at once  "par N = ok"
//	blocks | size      st_blocks, st_size                "blocks = N"
//	pid                "pid = N"
//	wait PATH          until PATH exists (10 s at most, else "wait PATH TIMEOUT")
//	touch PATH         create PATH                     "touch PATH = 0"
//	sleep MS           sleep                           "sleep MS"
//	echo WORD          "WORD"
//
// Numbers are decimal or 0x hex with optional K, M, G suffixes, or the
// names KEEP_SIZE, PUNCH_HOLE, ZERO_RANGE, MARK, UNMARK..., joined with |.
// Exit status: 0, 1 if a check failed, 2 on bad usage.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

const (
	markVolatile   = 0x10000000
	unmarkVolatile = 0x20000000
	sysMemfdCreate = 319 // x86-64; see memfdNr
)

var modeNames = map[string]int64{
	"KEEP_SIZE": 0x01, "PUNCH_HOLE": 0x02, "NO_HIDE_STALE": 0x04,
	"COLLAPSE_RANGE": 0x08, "ZERO_RANGE": 0x10, "INSERT_RANGE": 0x20,
	"UNSHARE_RANGE": 0x40, "WRITE_ZEROES": 0x80,
	"MARK": markVolatile, "UNMARK": unmarkVolatile,
}

var errNames = map[syscall.Errno]string{
	syscall.EPERM: "EPERM", syscall.ENOENT: "ENOENT", syscall.EINTR: "EINTR",
	syscall.EIO: "EIO", syscall.EBADF: "EBADF", syscall.EAGAIN: "EAGAIN",
	syscall.ENOMEM: "ENOMEM", syscall.EACCES: "EACCES", syscall.EFAULT: "EFAULT",
	syscall.EBUSY: "EBUSY", syscall.ENODEV: "ENODEV", syscall.EISDIR: "EISDIR",
	syscall.EINVAL: "EINVAL", syscall.EMFILE: "EMFILE", syscall.EFBIG: "EFBIG",
	syscall.ENOSPC: "ENOSPC", syscall.ESPIPE: "ESPIPE", syscall.EROFS: "EROFS",
	syscall.ENOSYS: "ENOSYS", syscall.EPROTO: "EPROTO",
	syscall.EOPNOTSUPP: "EOPNOTSUPP", syscall.ESTALE: "ESTALE",
	syscall.Errno(117): "EUCLEAN", syscall.ETIMEDOUT: "ETIMEDOUT",
}

func errName(e syscall.Errno) string {
	if n, ok := errNames[e]; ok {
		return n
	}
	return fmt.Sprintf("E#%d", int(e))
}

func usage(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "gofa: "+format+"\n", args...)
	os.Exit(2)
}

func term(arg, s string) int64 {
	if v, ok := modeNames[s]; ok {
		return v
	}
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult = 1 << 10
	case strings.HasSuffix(s, "M"):
		mult = 1 << 20
	case strings.HasSuffix(s, "G"):
		mult = 1 << 30
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		usage("'%s' is not a number", arg)
	}
	return v * mult
}

func num(arg string) int64 {
	var v int64
	for _, t := range strings.Split(arg, "|") {
		v |= term(arg, t)
	}
	return v
}

func byteArg(s string) byte {
	if s == "zero" {
		return 0
	}
	if len(s) != 1 {
		usage("'%s' is not one character or \"zero\"", s)
	}
	return s[0]
}

// fallocate(2) itself, with its return value
func rawFallocate(fd int, mode, off, length int64) (int64, syscall.Errno) {
	r, _, e := syscall.Syscall6(syscall.SYS_FALLOCATE, uintptr(fd), uintptr(mode),
		uintptr(off), uintptr(length), 0, 0)
	if e != 0 {
		return -1, e
	}
	return int64(r), 0
}

func result(r int64, e syscall.Errno) string {
	if r < 0 {
		return fmt.Sprintf(" = %d %s", r, errName(e))
	}
	return fmt.Sprintf(" = %d", r)
}

func memfdNr() uintptr {
	if runtime.GOARCH != "amd64" {
		usage("memfd: only amd64 is known here")
	}
	return sysMemfdCreate
}

type state struct {
	cur    int
	failed bool
}

func (s *state) fill(off, length int64, c byte) string {
	buf := make([]byte, 65536)
	for i := range buf {
		buf[i] = c
	}
	for done := int64(0); done < length; {
		n := length - done
		if n > int64(len(buf)) {
			n = int64(len(buf))
		}
		w, err := syscall.Pwrite(s.cur, buf[:n], off+done)
		if err != nil || w <= 0 {
			s.failed = true
			return fmt.Sprintf(" = -1 %v", err)
		}
		done += int64(w)
	}
	return " = ok"
}

func (s *state) expect(off, length int64, c byte) string {
	buf := make([]byte, 65536)
	for done := int64(0); done < length; {
		n := length - done
		if n > int64(len(buf)) {
			n = int64(len(buf))
		}
		got, err := syscall.Pread(s.cur, buf[:n], off+done)
		if err != nil || got <= 0 {
			s.failed = true
			return fmt.Sprintf(" MISMATCH read at %d: %v", off+done, err)
		}
		for i := 0; i < got; i++ {
			if buf[i] != c {
				s.failed = true
				return fmt.Sprintf(" MISMATCH at %d: 0x%02x", off+done+int64(i), buf[i])
			}
		}
		done += int64(got)
	}
	return " ok"
}

// par: n goroutines on n OS threads, each marking and unmarking its page
func (s *state) par(n int) string {
	var wg sync.WaitGroup
	bad := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			off := int64(i) * 4096
			if err := syscall.Fallocate(s.cur, markVolatile, off, 4096); err != nil {
				bad[i] = fmt.Sprintf("mark %d: %s", off, errName(err.(syscall.Errno)))
				return
			}
			if r, e := rawFallocate(s.cur, unmarkVolatile, off, 4096); r != 0 {
				bad[i] = fmt.Sprintf("unmark %d%s", off, result(r, e))
			}
		}(i)
	}
	wg.Wait()
	for _, b := range bad {
		if b != "" {
			s.failed = true
			return " = " + b
		}
	}
	return " = ok"
}

func main() {
	s := &state{cur: -1}
	a := os.Args[1:]
	if len(a) == 0 {
		usage("usage: gofa COMMAND... (see tests/helpers/gofa.go)")
	}
	nargs := map[string]int{
		"memfd": 2, "open": 2, "fill": 3, "expect": 3, "mark": 2, "unmark": 2,
		"fa": 3, "par": 1, "blocks": 0, "size": 0, "pid": 0, "wait": 1,
		"touch": 1, "sleep": 1, "echo": 1,
	}
	for len(a) > 0 {
		cmd := a[0]
		n, ok := nargs[cmd]
		if !ok {
			usage("unknown command '%s'", cmd)
		}
		if len(a) < 1+n {
			usage("%s needs %d arguments", cmd, n)
		}
		arg := a[1 : 1+n]
		a = a[1+n:]
		line := cmd
		if n > 0 {
			line += " " + strings.Join(arg, " ")
		}
		switch cmd {
		case "memfd":
			name, _ := syscall.BytePtrFromString(arg[0])
			fd, _, e := syscall.Syscall(memfdNr(), uintptr(unsafe.Pointer(name)), 2, 0)
			if e == 0 {
				e2 := syscall.Ftruncate(int(fd), num(arg[1]))
				if e2 != nil {
					e = e2.(syscall.Errno)
				}
			}
			if e != 0 {
				s.failed = true
				line += " = -1 " + errName(e)
			} else {
				s.cur = int(fd)
				line += fmt.Sprintf(" = %d", s.cur)
			}
		case "open":
			flags := map[string]int{"r": syscall.O_RDONLY, "rw": syscall.O_RDWR,
				"rwc": syscall.O_RDWR | syscall.O_CREAT,
				"rwt": syscall.O_RDWR | syscall.O_CREAT | syscall.O_TRUNC}
			f, ok := flags[arg[1]]
			if !ok {
				usage("unknown open mode '%s'", arg[1])
			}
			fd, err := syscall.Open(arg[0], f|syscall.O_CLOEXEC, 0600)
			if err != nil {
				line += " = -1 " + errName(err.(syscall.Errno))
			} else {
				line += fmt.Sprintf(" = %d", fd)
			}
			s.cur = fd
		case "fill":
			line += s.fill(num(arg[0]), num(arg[1]), byteArg(arg[2]))
		case "expect":
			line += s.expect(num(arg[0]), num(arg[1]), byteArg(arg[2]))
		case "mark":
			// the standard library's own call, as a Go program makes it
			if err := syscall.Fallocate(s.cur, markVolatile, num(arg[0]), num(arg[1])); err != nil {
				line += " = -1 " + errName(err.(syscall.Errno))
			} else {
				line += " = 0"
			}
		case "unmark":
			line += result(rawFallocate(s.cur, unmarkVolatile, num(arg[0]), num(arg[1])))
		case "fa":
			line += result(rawFallocate(s.cur, num(arg[0]), num(arg[1]), num(arg[2])))
		case "par":
			line += s.par(int(num(arg[0])))
		case "blocks", "size":
			var st syscall.Stat_t
			if err := syscall.Fstat(s.cur, &st); err != nil {
				line += " = -1 " + errName(err.(syscall.Errno))
			} else if cmd == "blocks" {
				line += fmt.Sprintf(" = %d", st.Blocks)
			} else {
				line += fmt.Sprintf(" = %d", st.Size)
			}
		case "pid":
			line += fmt.Sprintf(" = %d", os.Getpid())
		case "wait":
			deadline := time.Now().Add(10 * time.Second)
			for {
				if _, err := os.Stat(arg[0]); err == nil {
					break
				}
				if time.Now().After(deadline) {
					line += " TIMEOUT"
					s.failed = true
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		case "touch":
			fd, err := syscall.Open(arg[0], syscall.O_WRONLY|syscall.O_CREAT|syscall.O_CLOEXEC, 0600)
			if err != nil {
				line += " = -1 " + errName(err.(syscall.Errno))
			} else {
				syscall.Close(fd)
				line += " = 0"
			}
		case "sleep":
			time.Sleep(time.Duration(num(arg[0])) * time.Millisecond)
		case "echo":
			line = arg[0]
		}
		fmt.Println(line)
	}
	if s.failed {
		os.Exit(1)
	}
}
