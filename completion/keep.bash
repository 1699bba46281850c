# bash completion for keep: keep-agent and every keep command.
#
# Installed as share/bash-completion/completions/keep, with one symlink per
# command name (bash-completion loads a completion by the command's name).
# Flags come from the command's own usage text (`CMD -h`), so a new flag or
# a new command completes without editing this file; values of the common
# flags are completed here.

_keep_commands="keep-agent keep-store lease-fence lease-status lease-write node-watch
owner-acquire owner-check owner-commit owner-release owner-run owner-show owner-watch store-probe
upgrade-mark"

# _keep_flags CMD : the flags of CMD's usage text, one a line: every flag
# of the synopsis (the first paragraph), and the flags that start a line of
# the description (`  -v, --verbose   ...`); -h always.
_keep_flags() {
	{
		echo -h
		"$1" -h 2>/dev/null | awk '
			/^[a-z-]+ \342\200\224/ { next }
			/^[[:space:]]*$/ { if (seen) syn = 0; next }
			{ seen = 1 }
			syn != 0 { print; next }
			{ s = $0; while (match(s, /^[[:space:]]*--?[A-Za-z][A-Za-z-]*,?/)) {
				print substr(s, 1, RLENGTH); s = substr(s, RLENGTH + 1) } }
		' syn=1 | grep -oE -- '(^|[[:space:][|])--?[A-Za-z][A-Za-z-]*' | sed -e 's/^[[:space:][|]*//' -e '/^-c$/{p;s/.*/--config/;}'
	} | sort -u
}

# _keep_nodes : node ids in the bucket (node-watch --once), quietly
_keep_nodes() {
	local w
	w=$(command -v node-watch) || return 0
	timeout 3 "$w" --once "${_keep_common[@]}" 2>/dev/null | sed -n 's/^node id=\([^ ]*\).*/\1/p'
}

_keep() {
	local cur prev cmd i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	cmd=${COMP_WORDS[0]##*/}

	# owner-run KEY -- CMD ARGS...: after the --, complete CMD as a command
	if [ "$cmd" = owner-run ]; then
		for ((i = 1; i < COMP_CWORD; i++)); do
			if [ "${COMP_WORDS[i]}" = -- ]; then
				if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
					COMPREPLY=($(compgen -c -- "$cur"))
				else
					COMPREPLY=($(compgen -f -- "$cur"))
				fi
				return
			fi
		done
	fi

	# the common flags already given, for the commands run to complete values
	_keep_common=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-c | --config | --store | --state-dir)
			_keep_common+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 1]}")
			;;
		esac
	done

	case $prev in
	-c | --config)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--state-dir)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--store)
		COMPREPLY=($(compgen -W "file:// s3://" -- "$cur"))
		compopt -o nospace 2>/dev/null
		return
		;;
	--node-id)
		COMPREPLY=($(compgen -W "$(_keep_nodes)" -- "$cur"))
		return
		;;
	--wait-ms | --if-match | --if-version | --seed | --seeds | --go-fd | --kill-after)
		return
		;;
	esac

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_keep_flags "${COMP_WORDS[0]}")" -- "$cur"))
		return
	fi

	# positional arguments
	local nargs=0
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-c | --config | --store | --node-id | --state-dir | --wait-ms | --if-match | --if-version | --go-fd | --kill-after) ((i++)) ;;
		-*) ;;
		*) ((nargs++)) ;;
		esac
	done
	case $cmd in
	keep-agent)
		[ $nargs -eq 0 ] && COMPREPLY=($(compgen -W "status" -- "$cur"))
		;;
	keep-store)
		[ $nargs -eq 0 ] && COMPREPLY=($(compgen -W "get stat put del list" -- "$cur"))
		;;
	lease-fence)
		[ $nargs -eq 0 ] && COMPREPLY=($(compgen -W "$(_keep_nodes)" -- "$cur"))
		;;
	esac
}

complete -F _keep $_keep_commands
