# Shared PTY shell integration for zsh: start-up file 1 of 4.
#
# The session points ZDOTDIR at this folder, so zsh reads its start-up files from here. Each one
# reads the user's file of the same name from where zsh would have looked (the user's ZDOTDIR,
# else home), and .zshrc then loads integration.zsh, which marks prompts and commands with
# OSC 633 sequences. No file of the user's is edited; once the last file has run, ZDOTDIR is the
# user's again (for a nested zsh, and for .zlogout).

# The session's secret, which integration.zsh ends its marks with: read before anything else
# runs from the file SHARED_PTY_NONCE_FILE names, which is removed at once (or, where the session
# had no folder for it, from SHARED_PTY_NONCE), so no program zsh starts can find it, not even in
# /proc/<zsh>/environ (see integration.zsh).
typeset -g __spty_nonce=
if (( ${+SHARED_PTY_NONCE_FILE} )); then
  IFS= builtin read -r __spty_nonce <$SHARED_PTY_NONCE_FILE
  command rm -f -- $SHARED_PTY_NONCE_FILE
else
  __spty_nonce=${SHARED_PTY_NONCE-}
fi
builtin unset SHARED_PTY_NONCE SHARED_PTY_NONCE_FILE

# Started with -f (NO_RCS), which would have skipped this file too: the session took the flag out
# and these files skip the user's files and the system's after /etc/zshenv instead, as -f does.
if (( ${+SHARED_PTY_SHELL_NORCS} )); then
  typeset -g __spty_norcs=1
  builtin unset SHARED_PTY_SHELL_NORCS
  builtin setopt no_global_rcs
fi

# VS Code's own integration, should the user's files load it, sees itself loaded and stands
# back: one set of marks per prompt.
typeset -g VSCODE_SHELL_INTEGRATION=1
typeset -g __spty_zdotdir=$ZDOTDIR
if (( ${+SHARED_PTY_USER_ZDOTDIR} )); then
  ZDOTDIR=$SHARED_PTY_USER_ZDOTDIR
  builtin unset SHARED_PTY_USER_ZDOTDIR
else
  builtin unset ZDOTDIR
fi

# Back to the user's ZDOTDIR (or none), to read one of their files.
__spty_to_user() {
  if (( ${+__spty_user_zdotdir} )); then ZDOTDIR=$__spty_user_zdotdir; else builtin unset ZDOTDIR; fi
}

# Remembers the user's ZDOTDIR (their file may have chosen one) and points zsh here for the next file.
__spty_to_ours() {
  if (( ${+ZDOTDIR} )); then typeset -g __spty_user_zdotdir=$ZDOTDIR; else builtin unset __spty_user_zdotdir; fi
  ZDOTDIR=$__spty_zdotdir
}

# After the last start-up file: the user's ZDOTDIR for good, and none of our helpers left.
__spty_finish_startup() {
  __spty_to_user
  builtin unset __spty_user_zdotdir
  # As under -f: no .zlogout at the end, and the options read as -f leaves them (GLOBAL_RCS is on there).
  if (( ${+__spty_norcs} )); then builtin setopt no_rcs global_rcs; builtin unset __spty_norcs; fi
  builtin unfunction __spty_to_user __spty_to_ours __spty_finish_startup
}

if [[ -z ${__spty_norcs-} && -r ${ZDOTDIR:-$HOME}/.zshenv ]]; then builtin source "${ZDOTDIR:-$HOME}/.zshenv"; fi
__spty_to_ours
