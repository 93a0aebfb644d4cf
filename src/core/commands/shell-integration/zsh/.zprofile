# Shared PTY shell integration for zsh: start-up file 2 of 4 (login shells), see .zshenv.
__spty_to_user
if [[ -z ${__spty_norcs-} && -r ${ZDOTDIR:-$HOME}/.zprofile ]]; then builtin source "${ZDOTDIR:-$HOME}/.zprofile"; fi
__spty_to_ours
