# Shared PTY shell integration for zsh: start-up file 3 of 4 (interactive shells), see .zshenv.
__spty_to_user
# A system zshrc read meanwhile may have put the history file in this folder: it is the user's.
if [[ ${HISTFILE-} == $__spty_zdotdir/* ]]; then HISTFILE=${ZDOTDIR:-$HOME}/${HISTFILE:t}; fi
if [[ -z ${__spty_norcs-} && -r ${ZDOTDIR:-$HOME}/.zshrc ]]; then builtin source "${ZDOTDIR:-$HOME}/.zshrc"; fi
__spty_to_ours
builtin source "$__spty_zdotdir/integration.zsh"
# A login shell reads .zlogin next, from here; any other is done.
if [[ ! -o login ]]; then __spty_finish_startup; fi
