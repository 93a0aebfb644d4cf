# Shared PTY shell integration for zsh: start-up file 4 of 4 (login shells), see .zshenv.
__spty_to_user
if [[ -z ${__spty_norcs-} && -r ${ZDOTDIR:-$HOME}/.zlogin ]]; then builtin source "${ZDOTDIR:-$HOME}/.zlogin"; fi
__spty_to_ours
__spty_finish_startup
