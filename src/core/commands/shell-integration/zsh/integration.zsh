# Shared PTY shell integration for zsh: the marks, loaded by .zshrc after the user's own .zshrc.
# OSC 633 as VS Code's terminal reads it: A prompt start, B command line start, E;<command line>,
# C executed, D;<status> finished, P;Cwd=<dir>. The session turns them into command records.
# E, C, D and P end with `;<nonce>` (the session's secret, read by .zshenv): only marks with it
# make records, and the session takes it out before the output goes anywhere. A and B stay in PS1
# without it (PS1 may be exported); they only draw the editor's prompt marks.

if (( ${+__spty_loaded} )); then builtin return 0; fi
typeset -g __spty_loaded=1
# 0 at the prompt; 1 a command line runs; 2 the prompt is being made.
typeset -gi __spty_phase=2
typeset -g __spty_v='' __spty_ps1='' __spty_user_ps1=''

# Escapes $1 for an OSC 633 value into __spty_v: `\` doubled, `;` and control characters as \xNN.
__spty_escape() {
  builtin emulate -L zsh
  local v=${1//\\/\\\\} i hex ch
  v=${v//;/\\x3b}
  if [[ $v == *[$'\x01'-$'\x1f'$'\x7f']* ]]; then
    for (( i = 1; i < 32; i++ )); do
      builtin printf -v hex '%02x' $i
      ch=${(#)i}
      v=${v//$ch/\\x$hex}
    done
    v=${v//$'\x7f'/\\x7f}
  fi
  __spty_v=$v
}

# Before a command line runs: its text (as typed, several lines for a loop), then "executed".
__spty_preexec() {
  local status_=$?
  builtin emulate -L zsh
  # Our prompt hooks gone or moved (`precmd_functions=()`, an rc sourced again that sets the list
  # anew, a hook put before ours): the line before this one ended unreported. Report it now, with
  # the status it left (still $? here), and put the hooks back, first and last, for this line.
  if [[ ${precmd_functions[1]} != __spty_precmd || ${precmd_functions[-1]} != __spty_precmd_last ]]; then
    if (( __spty_phase == 1 )); then
      __spty_escape "$PWD"
      builtin printf '\e]633;P;Cwd=%s;%s\a\e]633;D;%s;%s\a' "$__spty_v" "$__spty_nonce" $status_ "$__spty_nonce"
    fi
    precmd_functions=(__spty_precmd ${precmd_functions:#__spty_precmd(|_last)} __spty_precmd_last)
  fi
  __spty_phase=1
  __spty_escape "${1:-$3}"
  builtin printf '\e]633;E;%s;%s\a\e]633;C;%s\a' "$__spty_v" "$__spty_nonce" "$__spty_nonce"
}

# The first precmd hook, so it sees the command's status: the working directory, then "finished"
# (the session answers a send when it reads "finished": by then it knows where `cd` went).
__spty_precmd() {
  local status_=$?
  builtin emulate -L zsh
  __spty_escape "$PWD"
  builtin printf '\e]633;P;Cwd=%s;%s\a' "$__spty_v" "$__spty_nonce"
  if (( __spty_phase == 1 )); then
    builtin printf '\e]633;D;%s;%s\a' $status_ "$__spty_nonce"
  else
    # No command ran (an empty line, Ctrl+C): an empty "finished", as VS Code's terminal expects.
    builtin printf '\e]633;D;%s\a' "$__spty_nonce"
  fi
  __spty_phase=2
  return $status_
}

# zsh prints its PROMPT_SP mark (PROMPT_EOL_MARK, spaces up to the margin, `\r`) as soon as a
# command ends, before any precmd hook can report the end. So the mark starts with one of ours,
# zero-width (`%{ %}`): `P;OutputEnd`, where the command's output ended. zsh still draws PROMPT_SP
# itself, from the user's options and mark, so the screen is what it would be (a command whose
# output has no final newline still gets the mark). Printing it ourselves instead (PROMPT_SP
# unset) would need zsh's width of the expanded mark and the terminal's margin behaviour, which
# a script can only approximate; recognising it afterwards would need the expanded mark too.
typeset -g __spty_eol_start="%{"$'\e]633;P;OutputEnd;'"$__spty_nonce"$'\a'"%}"
typeset -g __spty_eol=''
# Puts our mark in front of the user's PROMPT_EOL_MARK (zsh's own when unset), again whenever
# they have set it anew.
__spty_mark_eol() {
  if (( ${+PROMPT_EOL_MARK} )) && [[ $PROMPT_EOL_MARK == "$__spty_eol" ]]; then return; fi
  local mark='%B%S%#%s%b'
  if (( ${+PROMPT_EOL_MARK} )); then mark=${PROMPT_EOL_MARK#"$__spty_eol_start"}; fi
  __spty_eol=$__spty_eol_start$mark
  PROMPT_EOL_MARK=$__spty_eol
}

# The last precmd hook, after any theme has made its prompt: mark where it starts and ends. The
# marks are zero-width only through `%{ %}`: without PROMPT_PERCENT (`emulate sh`, or unset) zsh
# would print those as they are, so the prompt is left unmarked (and given back, if it was marked).
__spty_precmd_last() {
  local percent=0
  [[ -o promptpercent ]] && percent=1
  builtin emulate -L zsh
  __spty_mark_eol
  if (( ! percent )); then
    [[ -n $__spty_ps1 && $PS1 == "$__spty_ps1" ]] && PS1=$__spty_user_ps1
    __spty_ps1=''
  elif [[ $PS1 != "$__spty_ps1" ]]; then
    __spty_user_ps1=$PS1
    __spty_ps1="%{"$'\e]633;A\a'"%}$PS1%{"$'\e]633;B\a'"%}"
    PS1=$__spty_ps1
  fi
  # A hook added after ours (a theme loaded later) would change the prompt once it is marked.
  if [[ ${precmd_functions[-1]} != __spty_precmd_last ]]; then
    precmd_functions=(${precmd_functions:#__spty_precmd_last} __spty_precmd_last)
  fi
  __spty_phase=0
}

# With zsh's own options for this part (a user's `setopt nounset` would stop it at the unset hook list).
() {
  builtin emulate -L zsh
  # As add-zsh-hook would, without loading it into a shell that had no such function.
  preexec_functions+=(__spty_preexec)
  precmd_functions=(__spty_precmd ${precmd_functions[@]} __spty_precmd_last)
  __spty_mark_eol
}
