# shellcheck shell=bash
# keep — objects written by something other than keep, for the tests of
# foreign keys and objects (tests/bats/011x-*.bats). After keep_setup.
#
#   foreign_put KEY FILE   store FILE's bytes as KEY (any bytes in KEY):
#                          s3: one PUT with curl --aws-sigv4 (as the AWS CLI
#                          or a console would), the key percent-encoded;
#                          fs: a plain file at the key's path, no keep
#                          header (a key ending in '/' makes a directory)
#   foreign_put_ours KEY FILE  fs: the file with keep's fs header first (an
#                          object keep would read, but for its size); s3: as
#                          foreign_put
#   pct KEY                KEY percent-encoded for a URL path ('/' kept)

pct() {
	local LC_ALL=C s=$1 i c out=
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		[A-Za-z0-9._~/-]) out+=$c ;;
		*)
			printf -v c '%%%02X' "'$c"
			out+=$c
			;;
		esac
	done
	printf '%s' "$out"
}

foreign_put() {
	local key=$1 file=$2
	case "${KEEP_TEST_STORE:-fs}" in
	s3)
		local base=${STORE_URL#s3://}
		curl -sS --fail -X PUT --data-binary "@$file" \
			-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
			--aws-sigv4 "aws:amz:${S3_REGION:-us-east-1}:s3" \
			--user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
			-o /dev/null "$S3_ENDPOINT/$base/$(pct "$key")"
		;;
	*)
		local dir=${STORE_URL#file://}
		if [[ $key == */ ]]; then
			mkdir -p "$dir/$key"
		else
			mkdir -p "$(dirname "$dir/$key")"
			cp "$file" "$dir/$key"
		fi
		;;
	esac
}

foreign_put_ours() {
	local key=$1 file=$2
	if [ "${KEEP_TEST_STORE:-fs}" = s3 ]; then
		foreign_put "$key" "$file"
		return
	fi
	local dir=${STORE_URL#file://}
	mkdir -p "$(dirname "$dir/$key")"
	{ printf 'KEEPFS1 1767225600000000000-00000000000000aa\n'; cat "$file"; } >"$dir/$key"
}
