# Shared PTY shell integration for fish.
#
# The session starts fish with `--init-command "source <this file>"`: fish has read the user's
# configuration by then (nothing of the user's is edited). This file marks prompts and commands
# with the OSC 633 sequences VS Code's terminal understands: A prompt start, B command line
# start, E;<command line>, C executed, D;<status> finished, P;Cwd=<dir>. The session turns them
# into command records. E, C, D and P end with `;<nonce>`, the session's secret: only marks with
# it make records, and the session takes it out before the output goes anywhere. It arrives in a
# file named by SHARED_PTY_NONCE_FILE (or, where the session had no folder for it, in
# SHARED_PTY_NONCE), which fish-data/fish/vendor_conf.d/00-shared-pty.fish read and removed before
# the user's config.fish ran, so that the programs fish starts cannot find it, not even in
# /proc/<fish>/environ. Where fish read no configuration (-N), that snippet runs now.

source (string replace -r '[^/]*$' '' -- (status filename))fish-data/fish/vendor_conf.d/00-shared-pty.fish

# The session set VSCODE_SHELL_INTEGRATION for fish's configuration (VS Code's own integration,
# should it be loaded there, stands back); it is not for the programs fish starts.
set -e VSCODE_SHELL_INTEGRATION
set -g VSCODE_SHELL_INTEGRATION 1
status is-interactive; or exit
set -q __spty_loaded; and exit
set -g __spty_loaded 1
# Whether a command line ran since the last prompt.
set -g __spty_ran 0

# Escapes a value for OSC 633: `\` doubled, `;` and control characters as \xNN.
function __spty_escape
    set -l v (string replace --all -- '\\' '\\\\' "$argv[1]" | string collect)
    set v (string replace --all -- ';' '\\x3b' "$v" | string collect)
    if string match --quiet --regex -- '[\x01-\x1f\x7f]' "$v"
        for i in (seq 1 31) 127
            set -l hex (printf '%02x' $i)
            set -l ch (printf "\\x$hex" | string collect --no-trim-newlines)
            set v (string replace --all -- $ch "\\x$hex" "$v" | string collect)
        end
    end
    printf '%s' "$v"
end

function __spty_preexec --on-event fish_preexec
    # A line of blanks runs nothing, and makes no record (as in bash and zsh, which never report one).
    if string match -qr -- '^\s*$' "$argv[1]"
        return
    end
    set -g __spty_ran 1
    printf '\e]633;E;%s;%s\a\e]633;C;%s\a' (__spty_escape "$argv[1]" | string collect) $__spty_nonce $__spty_nonce
end

# The working directory (__spty_cwd: the one reported last).
set -g __spty_cwd
function __spty_report_cwd
    set -g __spty_cwd $PWD
    printf '\e]633;P;Cwd=%s;%s\a' (__spty_escape "$PWD" | string collect) $__spty_nonce
end

# The working directory, then "finished": the session answers a send when it reads "finished",
# and by then knows where `cd` went (the prompt's handlers, which run later, may take their time).
function __spty_postexec --on-event fish_postexec
    set -l s $status
    # No command line ran (a line of blanks): the prompt reports it, as for an empty line.
    test $__spty_ran = 1; or return
    __spty_report_cwd
    printf '\e]633;D;%s;%s\a' $s $__spty_nonce
end

function __spty_prompt_event --on-event fish_prompt
    # A prompt defined anew since is wrapped again (the event comes before the prompt is drawn).
    string match --quiet '*__spty_user_prompt*' (functions fish_prompt 2>/dev/null | string collect); or __spty_wrap_prompt
    # No command ran (an empty line, Ctrl+C): an empty "finished", as VS Code's terminal expects.
    if test $__spty_ran = 0
        __spty_report_cwd
        printf '\e]633;D;%s\a' $__spty_nonce
    else if test "$PWD" != "$__spty_cwd"
        # Moved by a handler that ran after the command's end.
        __spty_report_cwd
    end
    set -g __spty_ran 0
end

# The user's prompt (their own, or fish's default), between the prompt marks; again whenever
# they define it anew (`function fish_prompt`, `fish_config prompt choose`, `functions -e`).
function __spty_wrap_prompt
    functions --erase __spty_user_prompt
    if functions --query fish_prompt
        functions --copy fish_prompt __spty_user_prompt
    else
        function __spty_user_prompt
            printf '%s> ' (prompt_pwd)
        end
    end
    # The user's prompt runs first, so its $status and $pipestatus are the command's (a prompt
    # that shows a failed status shows it); its output goes between the marks unchanged.
    function fish_prompt
        set -l prompt (__spty_user_prompt | string collect --no-trim-newlines)
        printf '\e]633;A\a%s\e]633;B\a' "$prompt"
    end
end
__spty_wrap_prompt
