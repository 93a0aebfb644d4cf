# Shared PTY: fish reads this before the user's config.fish (a vendor snippet, from the folder the
# session put first in XDG_DATA_DIRS). It takes the session's secret out of its file and removes
# the file, as zsh's .zshenv does, so that nothing config.fish starts (an `exec tmux`) can read it
# and forge command records; then it gives XDG_DATA_DIRS back. fish.fish, run after the
# configuration, uses the secret (and reads the file itself when fish read no configuration: -N).
if set -q SHARED_PTY_FISH_DATA_DIRS
    if test -n "$SHARED_PTY_FISH_DATA_DIRS"
        set -gx XDG_DATA_DIRS $SHARED_PTY_FISH_DATA_DIRS
    else
        set -e XDG_DATA_DIRS
    end
    set -e SHARED_PTY_FISH_DATA_DIRS
end
if set -q SHARED_PTY_NONCE_FILE
    read -g __spty_nonce <$SHARED_PTY_NONCE_FILE
    command rm -f -- $SHARED_PTY_NONCE_FILE
else if set -q SHARED_PTY_NONCE
    set -g __spty_nonce $SHARED_PTY_NONCE
end
set -e SHARED_PTY_NONCE
set -e SHARED_PTY_NONCE_FILE
