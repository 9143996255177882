#!/bin/sh
# SPDX-License-Identifier: MIT
# `volatile run -- CMD` on a terminal behaves as CMD does without run
# (doc/wrappers.md; DESIGN 21: CMD is exec'd in run's place, so the
# terminal, the session and the shell's job control see CMD itself):
#   a. a terminal closed (tmux kill-session: its pty's hangup) ends CMD as
#      it ends CMD without run; the terminal's SIGINT (Ctrl-C), SIGQUIT
#      (Ctrl-\) and SIGWINCH (a resize) reach CMD once each;
#   b. in an interactive bash: a CMD that stops itself (SIGTSTP) gives the
#      prompt back, `jobs` lists it Stopped, `fg` continues it and `$?` is
#      its exit status; Ctrl-Z stops CMD, `bg` and `kill %1` work; a
#      stopped CMD continued by `kill -CONT` from another process finishes.
# Each part runs without run first, then with it, and expects the same.
. "$(dirname "$0")/lib.sh"

need_cmd
command -v tmux >/dev/null 2>&1 || skip "tmux is not installed (it plays the terminal)"

sock=$WORK/tmux.sock
T() {
	tmux -S "$sock" "$@"
}
trap 'tmux -S "$sock" kill-server 2>/dev/null; cleanup' EXIT
# a session that stays: the server would exit with its last session, and
# race the next new-session ("server exited unexpectedly")
T new-session -d -s keep "sleep $((VL_WAIT_TICKS / 10))" || fail "tmux cannot start a session here"

# pane SESSION: what its terminal shows, with its history, lines joined
pane() {
	T capture-pane -p -J -S -300 -t "$1" >"$WORK/pane.out" 2>/dev/null
}

# wait_pane SESSION ERE WHY: until the terminal shows a line matching ERE
# after the last line that holds the mark ($mark), 60 s at most
wait_pane() {
	_w=0
	while :; do
		pane "$1"
		awk -v m="$mark" 'index($0, m) { n = NR; s = "" } NR > n && n { s = s $0 "\n" } END { printf "%s", s }' \
			"$WORK/pane.out" >"$WORK/after.out"
		grep -qE -- "$2" "$WORK/after.out" && return 0
		# (a look costs tmux, awk and grep: every 50 ms, 60 s in all)
		_w=$((_w + 5))
		if [ "$_w" -gt "$VL_WAIT_TICKS" ]; then
			echo "---- the terminal:" >&2
			cat "$WORK/pane.out" >&2
			fail "$3"
		fi
		sleep 0.05
	done
}

# wait_gone PID WHY: until process PID is gone, 60 s at most
wait_gone() {
	_w=0
	while kill -0 "$1" 2>/dev/null; do
		_w=$((_w + 1))
		[ "$_w" -le "$VL_WAIT_TICKS" ] || {
			ps -o pid,ppid,pgid,sid,stat,args -p "$1" >&2
			kill -KILL "$1" 2>/dev/null
			fail "$2"
		}
		sleep 0.01
	done
}

# wait_pidfile PATH: until CMD wrote its pid there; the pid in $pid
wait_pidfile() {
	wait_file "$1"
	until [ -s "$1" ]; do sleep 0.01; done
	pid=$(cat "$1")
}

# run_or_not WAY: the words that start CMD: "" or volatile run
run_or_not() {
	case $1 in
	direct) echo "" ;;
	run) echo "'$VOLATILE_CMD' run --" ;;
	esac
}

# ---- a. hangup, and the terminal's signals ---------------------------------------
# where: what sh, CMD here, is to its terminal (tmux starts it a session's
# leader, with the pane's pty as its controlling terminal)
# shellcheck disable=SC2016 # for CMD's sh
where='set -- $(sed "s/.*) //" /proc/$$/stat); echo "tty: $([ $5 != 0 ] && echo yes), session leader: $([ $4 = $$ ] && echo yes), foreground: $([ $3 = $6 ] && echo yes)"'
for way in direct run; do
	w=$(run_or_not $way)
	T new-session -d -s "h$way" -x 100 -y 30 \
		"$w sh -c '$where >\"$WORK/h$way.tty\"; echo \$\$ >\"$WORK/h$way.pid\"; exec sleep 300'" ||
		fail "tmux cannot start a session here"
	wait_pidfile "$WORK/h$way.pid"
	T kill-session -t "h$way"
	wait_gone "$pid" "$way: the terminal was closed (tmux kill-session) and CMD (sleep 300) runs on"
	# CMD, as the terminal saw it: the session's leader, in the foreground
	expect_eq "$way: CMD's terminal, session and group" "$(cat "$WORK/h$way.tty")" \
		"tty: yes, session leader: yes, foreground: yes"
done

for way in direct run; do
	w=$(run_or_not $way)
	# (wait_line reads $WORK/NAME.out)
	c=$WORK/count.$way.out
	T new-session -d -s "s$way" -x 100 -y 30 \
		"$w sh -c 'echo \$\$ >\"$WORK/s$way.pid\"; exec \"$VT\" sigcount \"$c\"'" ||
		fail "tmux cannot start a session here"
	wait_pidfile "$WORK/s$way.pid"
	wait_file "$c"
	mark=
	T send-keys -t "s$way" C-c
	wait_line "count.$way" "INT 1 QUIT 0 WINCH 0 CONT 0"
	# shellcheck disable=SC1003 # tmux's name of the key Ctrl-\
	T send-keys -t "s$way" 'C-\'
	wait_line "count.$way" "INT 1 QUIT 1 WINCH 0 CONT 0"
	T resize-window -t "s$way" -x 90 -y 25
	wait_line "count.$way" "INT 1 QUIT 1 WINCH 1 CONT 0"
	# one more Ctrl-C: a second delivery of any of the first would be counted by now
	T send-keys -t "s$way" C-c
	wait_line "count.$way" "INT 2 QUIT 1 WINCH 1 CONT 0"
	T kill-session -t "s$way"
	wait_gone "$pid" "$way: the terminal was closed and CMD (vt sigcount) runs on"
done

# ---- b. job control in an interactive bash ---------------------------------------
command -v bash >/dev/null 2>&1 || skip "bash is not installed (the job control part needs it)"
for way in direct run; do
	w=$(run_or_not $way)
	s=j$way
	T new-session -d -s "$s" -x 200 -y 50 "env PS1='vl\$ ' HISTFILE=/dev/null bash --norc -i" ||
		fail "tmux cannot start a session here"
	mark='vl$ '
	wait_pane "$s" '^$' "$way: bash does not start"
	n=0
	step() {
		n=$((n + 1))
		# (a comment: `$?` stays that of the command before)
		mark="# $way-$n"
		T send-keys -t "$s" "$1 $mark" Enter
	}
	# a program that stops itself
	step "$w sh -c 'echo \$\$ >\"$WORK/t$way.pid\"; exec \"$VT\" tstp 3'"
	wait_pane "$s" 'Stopped' "$way: CMD stopped itself (SIGTSTP) and bash never printed its prompt again"
	wait_pane "$s" '^vl\$ $' "$way: no prompt after CMD stopped"
	step jobs
	wait_pane "$s" '^\[1\]\+ +Stopped .*tstp 3' "$way: jobs does not list CMD Stopped"
	step fg
	wait_pane "$s" '^continued$' "$way: fg did not continue CMD"
	step 'echo "status=$?"'
	wait_pane "$s" '^status=3$' "$way: CMD continued by fg exits 3: \$? is not 3"
	# Ctrl-Z, bg, kill %1
	rm -f "$WORK/z$way.pid"
	step "$w sh -c 'echo \$\$ >\"$WORK/z$way.pid\"; exec sleep 300'"
	wait_pidfile "$WORK/z$way.pid"
	T send-keys -t "$s" C-z
	wait_pane "$s" 'Stopped' "$way: Ctrl-Z did not stop CMD (sleep 300)"
	wait_pane "$s" '^vl\$ $' "$way: no prompt after Ctrl-Z"
	step bg
	wait_pane "$s" '^\[1\]\+ .*sleep 300.* &$' "$way: bg did not continue CMD in the background"
	step 'kill %1; wait; echo "killed=$?"'
	wait_pane "$s" '^killed=' "$way: kill %1 did not end CMD"
	wait_gone "$pid" "$way: kill %1 did not end CMD (sleep 300)"
	# a stopped CMD continued from another process
	rm -f "$WORK/c$way.pid"
	step "$w sh -c 'echo \$\$ >\"$WORK/c$way.pid\"; exec \"$VT\" tstp 4'"
	wait_pidfile "$WORK/c$way.pid"
	wait_pane "$s" '^vl\$ $' "$way: no prompt after CMD stopped itself"
	wait_stopped "c$way" "$pid" "$way: CMD did not stop"
	kill -CONT "$pid"
	wait_gone "$pid" "$way: CMD continued by kill -CONT does not finish"
	step jobs
	wait_pane "$s" '^\[1\]\+ +Exit 4 .*tstp 4' "$way: bash does not see CMD, continued by kill -CONT, exit 4"
	T kill-session -t "$s"
done
exit 0
