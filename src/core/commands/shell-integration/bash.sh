# Shared PTY shell integration for bash.
#
# The session starts an interactive bash with `--init-file <this file>`, so no file of the user's
# is edited. This file reads the user's start-up files as bash would have, then marks prompts and
# commands with the OSC 633 sequences VS Code's terminal understands: A prompt start, B command
# line start, E;<command line>, C executed, D;<status> finished, P;Cwd=<dir>. The session turns
# them into command records; the editor's terminal shows its command decorations from them.
#
# E, C, D and P end with `;<nonce>`, the session's secret: only marks with it make records, so
# nothing a program prints can forge a command. The session takes the nonce out before the output
# goes anywhere. It arrives in a file named by SHARED_PTY_NONCE_FILE, read and removed at once
# (or, where the session had no folder for it, in SHARED_PTY_NONCE): the programs bash starts from
# here on (the user's start-up files' included) never see it, not even in /proc/<bash>/environ,
# which holds the environment bash started with. A and B stay in PS1 without it (PS1 may be
# exported); they only draw the editor's prompt marks and make no record.
if [ -n "${SHARED_PTY_NONCE_FILE-}" ]; then
	IFS= builtin read -r __spty_nonce <"$SHARED_PTY_NONCE_FILE"
	command rm -f -- "$SHARED_PTY_NONCE_FILE"
else
	__spty_nonce=${SHARED_PTY_NONCE-${__spty_nonce-}}
fi
builtin unset SHARED_PTY_NONCE SHARED_PTY_NONCE_FILE

# VS Code's own integration, should the user's files load it, sees itself loaded and stands
# back: one set of marks per prompt.
VSCODE_SHELL_INTEGRATION=1

# A shell started to read no start-up file (--norc, or a login shell with --noprofile) runs this
# file from its first prompt's PROMPT_COMMAND, which the session set: the prompt command bash was
# given goes back as it was (or away), and no file is read here either.
if [ -n "${SHARED_PTY_SHELL_FIRST_PROMPT-}" ]; then
	__spty_first_prompt=1
	if [ -n "${SHARED_PTY_SHELL_PROMPT_COMMAND+set}" ]; then PROMPT_COMMAND=$SHARED_PTY_SHELL_PROMPT_COMMAND; else builtin unset PROMPT_COMMAND; fi
	builtin unset SHARED_PTY_SHELL_FIRST_PROMPT SHARED_PTY_SHELL_PROMPT_COMMAND
fi

# The user's start-up files (bash itself has read /etc/bash.bashrc before this file).
if [ -n "${SHARED_PTY_SHELL_LOGIN-}" ]; then
	# Asked for a login shell: bash reads no --init-file as one, so it was started without -l
	# and the login files are read here, as bash would: /etc/profile, then the first user file.
	# Nor would bash have read the system bashrc (a login shell reads it only if /etc/profile
	# does): the prompt goes back to the one bash would have shown (the environment's, else its own).
	if [ -n "${SHARED_PTY_SHELL_PS1+set}" ]; then PS1=$SHARED_PTY_SHELL_PS1; else PS1='\s-\v\$ '; fi
	unset SHARED_PTY_SHELL_LOGIN SHARED_PTY_SHELL_PS1
	if [ -r /etc/profile ]; then . /etc/profile; fi
	if [ -r ~/.bash_profile ]; then . ~/.bash_profile
	elif [ -r ~/.bash_login ]; then . ~/.bash_login
	elif [ -r ~/.profile ]; then . ~/.profile
	fi
elif [ -n "${SHARED_PTY_SHELL_RCFILE+set}" ]; then
	# Started with --rcfile FILE: that file instead of ~/.bashrc, as bash would.
	__spty_rcfile=$SHARED_PTY_SHELL_RCFILE
	builtin unset SHARED_PTY_SHELL_RCFILE
	if [ -r "$__spty_rcfile" ]; then . "$__spty_rcfile"; fi
	builtin unset __spty_rcfile
elif [ -z "${__spty_first_prompt-}" ] && [ -r ~/.bashrc ]; then
	. ~/.bashrc
fi

# Not interactive after all, or loaded already: nothing to mark.
if [[ $- != *i* || -n "${__spty_loaded-}" ]]; then
	builtin return 0
fi
__spty_loaded=1
# Not for the environment, even if the user's files turned on allexport.
builtin export -n __spty_nonce

# 0 at the prompt; 1 a command line runs (E sent); 2 a command line runs whose text is not known
# yet; 3 the prompt is being made (PROMPT_COMMAND).
__spty_phase=3
# $HISTCMD at the last prompt: a larger one in PS0 means the new line went into the history.
__spty_histcmd=0
__spty_nil=
__spty_v=
__spty_ps1=
# PS0 (bash 4.4+) is shown once per command line that runs, never for an empty line or Ctrl+C,
# and also for a line that is only a subshell, where no DEBUG trap fires. Its arithmetic runs in
# the shell itself (the phase), its command substitution prints E and C.
__spty_ps0='${__spty_nil:$(( __spty_phase = 2 - (${HISTCMD:-0} > __spty_histcmd) )):0}$(__spty_executed)'
if (( BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4) )) && builtin shopt -q promptvars; then
	__spty_has_ps0=1
else
	__spty_has_ps0=0
fi

# Escapes $1 for an OSC 633 value into __spty_v: `\` doubled, `;` and control characters as \xNN.
__spty_escape() {
	builtin local v="${1//\\/\\\\}" i hex ch
	v=${v//;/\\x3b}
	if [[ $v == *[$'\001'-$'\037'$'\177']* ]]; then
		for (( i = 1; i < 32; i++ )); do
			builtin printf -v hex '%02x' "$i"
			builtin printf -v ch "\\x$hex"
			v=${v//"$ch"/\\x$hex}
		done
		v=${v//$'\177'/\\x7f}
	fi
	__spty_v=$v
}

# The newest history entry without its number (and without a time: HISTTIMEFORMAT may be set).
__spty_history_line() {
	builtin local line
	line=$(HISTTIMEFORMAT= builtin history 1)
	line=${line#"${line%%[![:space:]]*}"}
	line=${line#"${line%%[!0-9]*}"}
	line=${line#\*}
	builtin printf '%s' "${line#"${line%%[![:space:]]*}"}"
}

# Runs in PS0's command substitution: the line's text when the history has it, then "executed".
__spty_executed() {
	if (( __spty_phase == 1 )); then
		__spty_escape "$(__spty_history_line)"
		builtin printf '\e]633;E;%s;%s\a' "$__spty_v" "$__spty_nonce"
	fi
	builtin printf '\e]633;C;%s\a' "$__spty_nonce"
}

# The DEBUG trap, before each simple command. With PS0 it only finds the text of a line the
# history did not take (HISTCONTROL=ignoredups or ignorespace, history off): a repeat of the last
# entry, else what bash runs. Without PS0 (bash < 4.4) it marks the start of the line too.
__spty_debug() {
	[[ ${PROMPT_COMMAND-} == "$__spty_pc" ]] || __spty_keep_hooks
	if (( __spty_spaced )) && [[ $BASH_COMMAND != __spty_* ]]; then __spty_put_spaced_out; fi
	if (( __spty_phase == 2 || (__spty_phase == 0 && ! __spty_has_ps0) )) && [[ $BASH_COMMAND != __spty_* ]]; then
		builtin local line
		line=$(__spty_history_line)
		if ! (( __spty_phase == 0 && ${HISTCMD:-0} > __spty_histcmd )); then
			# Not new in the history: a repeat of its last entry, else the command bash runs.
			[[ -n $BASH_COMMAND && $line == "$BASH_COMMAND"* ]] || line=$BASH_COMMAND
		fi
		__spty_escape "$line"
		builtin printf '\e]633;E;%s;%s\a' "$__spty_v" "$__spty_nonce"
		if (( __spty_phase == 0 )); then builtin printf '\e]633;C;%s\a' "$__spty_nonce"; fi
		__spty_phase=1
	fi
}

__spty_return() {
	builtin return "$1"
}

# The command's status back in $? for what runs next in PROMPT_COMMAND (the user's hooks, PS1's
# \$?), as it would have been; not under the user's `set -e`, where a prompt hook that returns
# non-zero ends the shell (a Ctrl+C at the prompt would).
__spty_status_back() {
	if [[ $- != *e* ]]; then __spty_return "$__spty_status"; fi
}

# HISTCONTROL=ignorespace (or ignoreboth, Debian's default) keeps a line that starts with a space
# out of the history, and with it the line's text: the DEBUG trap would only see its first simple
# command. So while bash reads a line at the prompt, HISTCONTROL takes such a line after all
# (ignoreboth becomes ignoredups), and PS0 finds its text there; before anything of the line runs
# (the DEBUG trap, or the next prompt for a line that is only a subshell), the user's value is back
# and the entry is deleted, so the history holds what it always would have. bash-preexec, where
# loaded, does the same itself (and keeps HISTCONTROL so): left to it.
__spty_spaced=0
__spty_histcontrol=
__spty_histsize=
__spty_let_spaced_in() {
	builtin local v=":${HISTCONTROL-}:"
	(( __spty_has_ps0 )) && [[ -z "${bash_preexec_imported-}${__bp_imported-}" ]] || builtin return 0
	[[ $v == *:ignorespace:* || $v == *:ignoreboth:* ]] || builtin return 0
	# A HISTCONTROL the user made read-only (set: it names ignorespace) is left as it is.
	[[ ${HISTCONTROL@a} != *r* ]] || builtin return 0
	__spty_histcontrol=$HISTCONTROL
	while [[ $v == *:ignorespace:* ]]; do v=${v/:ignorespace:/:}; done
	while [[ $v == *:ignoreboth:* ]]; do v=${v/:ignoreboth:/:ignoredups:}; done
	v=${v#:}
	HISTCONTROL=${v%:}
	# Room for the line a moment: at a full history it would push the oldest entry out for good.
	__spty_histsize=${HISTSIZE-}
	if [[ $__spty_histsize =~ ^[1-9][0-9]*$ ]]; then HISTSIZE=$((__spty_histsize + 1)); fi
	__spty_spaced=1
}
__spty_drop_spaced_entry() {
	# The line went into the history: PS0 saw it (phase 1), or, at the next prompt, the history
	# grew (a line that never ran: a comment, a syntax error, a continuation cut by Ctrl+C).
	(( __spty_phase == 1 || (${1-0} && ${HISTCMD:-0} > __spty_histcmd) )) || builtin return 0
	# `history 1` prints the entry's number, a space or `*`, a space, then the line as typed.
	builtin local entry number
	entry=$(HISTTIMEFORMAT= builtin history 1)
	entry=${entry#"${entry%%[![:space:]]*}"}
	number=${entry%%[!0-9]*}
	entry=${entry#"$number"}
	# A space, as ignorespace has it (a tab does not count). (An `if`, not `&&`: a false test must
	# not fail the function under the user's `set -e`.)
	if [[ -n $number && ${entry:2:1} == ' ' ]]; then builtin history -d "$number"; fi
}
__spty_put_spaced_out() {
	__spty_spaced=0
	HISTCONTROL=$__spty_histcontrol
	__spty_drop_spaced_entry "$@"
	# The size back once the entry is gone (set back before, it would cut the oldest one).
	if [[ $__spty_histsize =~ ^[1-9][0-9]*$ ]]; then HISTSIZE=$__spty_histsize; fi
}

# The working directory (__spty_cwd: the one reported last).
__spty_cwd=
__spty_report_cwd() {
	__spty_cwd=$PWD
	__spty_escape "$PWD"
	builtin printf '\e]633;P;Cwd=%s;%s\a' "$__spty_v" "$__spty_nonce"
}

# First in PROMPT_COMMAND, so it sees the command's status: the working directory, then
# "finished". The directory first: the session answers a send when it reads "finished", and the
# command may have changed directory (`cd /tmp && make`); the user's prompt commands, which run
# next, may take their time.
__spty_prompt_start() {
	builtin local __spty_status=$?
	if (( __spty_spaced )); then __spty_put_spaced_out 1; fi
	__spty_report_cwd
	if (( __spty_phase == 1 || __spty_phase == 2 )); then
		builtin printf '\e]633;D;%s;%s\a' "$__spty_status" "$__spty_nonce"
	else
		# No command ran (an empty line, Ctrl+C): an empty "finished", as VS Code's terminal expects.
		builtin printf '\e]633;D;%s\a' "$__spty_nonce"
	fi
	__spty_phase=3
	__spty_status_back
}

# Last in PROMPT_COMMAND, after the user's own prompt commands (which may cd, or make a new
# prompt each time): the working directory if they changed it, and the marks around the prompt.
__spty_prompt_end() {
	builtin local __spty_status=$?
	[[ $PWD == "$__spty_cwd" ]] || __spty_report_cwd
	if [[ $PS1 != "$__spty_ps1" ]]; then
		__spty_ps1='\[\e]633;A\a\]'"$PS1"'\[\e]633;B\a\]'
		PS1=$__spty_ps1
	fi
	if (( __spty_has_ps0 )) && [[ ${PS0-} != *"$__spty_ps0" ]]; then
		PS0=${PS0-}$__spty_ps0
	fi
	__spty_histcmd=${HISTCMD:-0}
	__spty_let_spaced_in
	__spty_phase=0
	__spty_last_hook
	__spty_status_back
}

# With bash-preexec, hooks added after ours (its own `precmd`, at its first prompt) would come
# after the prompt is marked: stay the last one.
__spty_last_hook() {
	[[ -n "${bash_preexec_imported-}${__bp_imported-}" ]] || builtin return 0
	local hooks=() f
	for f in "${precmd_functions[@]}"; do
		[[ $f == __spty_prompt_end ]] || hooks+=("$f")
	done
	precmd_functions=("${hooks[@]}" __spty_prompt_end)
}

# Ours first and last in PROMPT_COMMAND, however the user sets it after start-up: assigned anew
# (`source ~/.bashrc`, whose `PROMPT_COMMAND='history -a'` dropped ours: no prompt reported its
# command's end or the directory) or put before ours (`PROMPT_COMMAND="history -a; $PROMPT_COMMAND"`,
# whose commands took the status before ours read it: every exit code read 0). Checked before each
# simple command (the DEBUG trap: one comparison with the value set last, __spty_pc, as a loop at
# the prompt runs it at each turn), so the next prompt has them; one of ours found elsewhere (a
# wrapper that runs the saved value) is left as a command that keeps the status and "$_".
__spty_start_hook='__spty_prompt_start "$_"'
__spty_end_hook='__spty_prompt_end "$_"'
__spty_pc=
__spty_keep_hooks() {
	# With bash-preexec ours are its hooks; one the user made read-only stays as it is.
	__spty_pc=${PROMPT_COMMAND-}
	[[ -z "${bash_preexec_imported-}${__bp_imported-}" ]] || builtin return 0
	builtin local attributes=
	if (( __spty_has_ps0 )) && [[ -n ${PROMPT_COMMAND+set} ]]; then attributes=${PROMPT_COMMAND@a}; fi
	[[ $attributes != *r* ]] || builtin return 0
	if [[ $attributes == *a* ]]; then
		if [[ ${PROMPT_COMMAND[0]} == "$__spty_start_hook" && ${PROMPT_COMMAND[${#PROMPT_COMMAND[@]} - 1]} == "$__spty_end_hook" ]]; then builtin return 0; fi
		local hooks=() hook
		for hook in "${PROMPT_COMMAND[@]}"; do
			[[ $hook == "$__spty_start_hook" || $hook == "$__spty_end_hook" ]] || hooks+=("$hook")
		done
		PROMPT_COMMAND=("$__spty_start_hook" "${hooks[@]}" "$__spty_end_hook")
	else
		if [[ ${PROMPT_COMMAND-} == "$__spty_start_hook"$'\n'* && $PROMPT_COMMAND == *$'\n'"$__spty_end_hook" ]]; then builtin return 0; fi
		builtin local hooks="${PROMPT_COMMAND-}"
		hooks=${hooks//"$__spty_start_hook"/__spty_pass \"\$_\"}
		hooks=${hooks//"$__spty_end_hook"/__spty_pass \"\$_\"}
		PROMPT_COMMAND=$__spty_start_hook$'\n'${hooks:+$hooks$'\n'}$__spty_end_hook
	fi
	builtin export -n PROMPT_COMMAND
	__spty_pc=${PROMPT_COMMAND-}
}

# Keeps the status (and "$_") for what runs after it.
__spty_pass() {
	builtin return $?
}

# The user's PROMPT_COMMAND (a string, or since bash 5.1 possibly an array) runs between ours, as
# it would have: at the top level, seeing the command's status and its "$_". With bash-preexec,
# which owns PROMPT_COMMAND, ours are its first and last prompt hooks instead (it gives each one
# the command's status; anything after its own entry in PROMPT_COMMAND would confuse it).
if [[ -n "${bash_preexec_imported-}${__bp_imported-}" ]]; then
	precmd_functions=(__spty_prompt_start "${precmd_functions[@]}" __spty_prompt_end)
fi
# Put in as they are put back later (a string, or an array: both around the user's).
__spty_keep_hooks
# Ours is for this shell only: a bash it starts would find no such functions (an exported
# PROMPT_COMMAND, from the environment, would carry them there).
builtin export -n PROMPT_COMMAND

# A DEBUG trap the user's files set keeps running, after ours ("$_" keeps its value for it).
__spty_trap=()
builtin eval "__spty_trap=( $(builtin trap -p DEBUG) )"
if [[ -n ${__spty_trap[2]-} ]]; then
	builtin trap -- "__spty_debug \"\$_\"; ${__spty_trap[2]}" DEBUG
else
	builtin trap '__spty_debug "$_"' DEBUG
fi
builtin unset __spty_trap

# Loaded from the first prompt's PROMPT_COMMAND: this prompt gets its marks, as every later one will.
if [[ -n ${__spty_first_prompt-} ]]; then
	builtin unset __spty_first_prompt
	builtin eval -- "$PROMPT_COMMAND"
fi
