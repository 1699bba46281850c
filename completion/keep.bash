# bash completion for keep: the umbrella `keep`, keep-agent and every keep
# command.
#
# Installed as share/bash-completion/completions/keep, with one symlink per
# command name (bash-completion loads a completion by the command's name).
# Flags come from the command's own usage text (`CMD -h`), so a new flag or
# a new command completes without editing this file; values of the common
# flags are completed here. `keep NAME ...` completes as the program NAME
# stands for (`keep fence` as lease-fence). A store URL (`file:///dir`,
# `s3://bucket`) is one word here, although bash splits it at `:`
# (COMP_WORDBREAKS).

_keep_commands="keep keep-agent keep-store lease-fence lease-status lease-write node-watch
owner-acquire owner-check owner-commit owner-release owner-run owner-show owner-watch store-probe
upgrade-mark"

# keep's short names: NAME=PROGRAM[:FIRST-WORD] (cmd/keep.c, the one table)
_keep_aliases="init=upgrade-mark:native agent=keep-agent status=keep-agent:status
check=keep-agent:--check nodes=node-watch:--once watch=node-watch fence=lease-fence
forget=upgrade-mark:forget lease=lease-status acquire=owner-acquire release=owner-release
show=owner-show grant=owner-check run=owner-run commit=owner-commit owners=owner-watch
upgrade=upgrade-mark store=keep-store probe=store-probe help=help"

# _keep_flags CMD : the flags of CMD's usage text, one a line: every flag
# of the synopsis (the first paragraph), and the flags that start a line of
# the description (`  -v, --verbose   ...`); -h and the common --version,
# --json and --timestamps always.
_keep_flags() {
	{
		printf '%s\n' -h --version --json --timestamps
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

# _keep_apps : the application roots in the bucket (the ROOT of every
# apps/ROOT/ key: keep-store list apps/), quietly
_keep_apps() {
	local k
	k=$(command -v keep-store) || return 0
	timeout 3 "$k" "${_keep_common[@]}" list apps/ 2>/dev/null |
		sed -n 's|^object key=apps/\([a-z0-9_-]*\)/.*|\1|p' | sort -u
}

# _keep_words : _kw (the words) and _kc (the index of the current one) from
# COMP_WORDS and COMP_CWORD, with the words bash split at ':' joined again
# (`file:///x` comes as `file` `:` `///x`)
_keep_words() {
	local i w
	_kw=()
	_kc=0
	for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
		w=${COMP_WORDS[i]}
		if [ ${#_kw[@]} -gt 0 ] && { [ "$w" = : ] || [[ ${_kw[-1]} == *: ]]; }; then
			_kw[-1]+=$w
		else
			_kw+=("$w")
		fi
		[ "$i" -ne "$COMP_CWORD" ] || _kc=$((${#_kw[@]} - 1))
	done
}

_keep() {
	local cur prev cmd i first='' alias
	COMPREPLY=()
	_keep_words
	cur=${_kw[_kc]}
	prev=
	[ "$_kc" -eq 0 ] || prev=${_kw[_kc - 1]}
	cmd=${_kw[0]##*/}

	# keep NAME ...: NAME first, then as the program it stands for
	if [ "$cmd" = keep ]; then
		if [ "$_kc" -eq 1 ]; then
			if [[ $cur == -* ]]; then
				COMPREPLY=($(compgen -W "-h --version" -- "$cur"))
			else
				COMPREPLY=($(compgen -W "$(printf '%s\n' $_keep_aliases | sed 's/=.*//')" -- "$cur"))
			fi
			return
		fi
		alias=$(printf '%s\n' $_keep_aliases | sed -n "s/^${_kw[1]}=//p")
		[ -n "$alias" ] || return
		if [ "$alias" = help ]; then
			[ "$_kc" -eq 2 ] && COMPREPLY=($(compgen -W "$(printf '%s\n' $_keep_aliases | sed 's/=.*//')" -- "$cur"))
			return
		fi
		cmd=${alias%%:*}
		[ "$alias" = "$cmd" ] || first=${alias#*:}
		_kw=("$cmd" ${first:+"$first"} "${_kw[@]:2}")
		_kc=$((_kc - 1))
		[ -z "$first" ] || _kc=$((_kc + 1))
	fi
	_keep_complete "$cmd"
	# bash replaces only the part of the word after its last ':'
	if [[ $cur == *:* ]]; then
		for i in "${!COMPREPLY[@]}"; do
			COMPREPLY[i]=${COMPREPLY[i]#"${cur%:*}:"}
		done
	fi
}

# _keep_complete CMD : complete _kw[_kc] for program CMD (words in _kw)
_keep_complete() {
	local cmd=$1 cur=${_kw[_kc]} prev='' i nargs=0
	[ "$_kc" -eq 0 ] || prev=${_kw[_kc - 1]}

	# owner-run KEY -- CMD ARGS...: after the --, complete CMD as a command
	if [ "$cmd" = owner-run ]; then
		for ((i = 1; i < _kc; i++)); do
			if [ "${_kw[i]}" = -- ]; then
				if [ $((i + 1)) -eq "$_kc" ]; then
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
	for ((i = 1; i < _kc; i++)); do
		case ${_kw[i]} in
		-c | --config | --store | --state-dir)
			_keep_common+=("${_kw[i]}" "${_kw[i + 1]}")
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
	--app)
		COMPREPLY=($(compgen -W "$(_keep_apps)" -- "$cur"))
		return
		;;
	--wait-ms | --if-match | --if-version | --seed | --seeds | --go-fd | --kill-after)
		return
		;;
	esac

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_keep_flags "$cmd")" -- "$cur"))
		return
	fi

	# positional arguments
	for ((i = 1; i < _kc; i++)); do
		case ${_kw[i]} in
		-c | --config | --store | --node-id | --state-dir | --app | --wait-ms | --if-match | --if-version | --go-fd | --kill-after) ((i++)) ;;
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
	upgrade-mark)
		if [ $nargs -eq 0 ]; then
			COMPREPLY=($(compgen -W "guard actors forget native" -- "$cur"))
		elif [ $nargs -eq 1 ] && [ "${_kw[_kc - 1]}" = forget ]; then
			COMPREPLY=($(compgen -W "$(_keep_nodes)" -- "$cur"))
		fi
		;;
	esac
}

complete -F _keep $_keep_commands
