/* imds — a loopback stand-in for the EC2 instance metadata service, IMDSv2
 * only, for the credential tests (tests/bats/0822-creds-imds.bats).
 *
 *   imds PORTFILE --access-key K --secret-key S [--token T] [--role R]
 *        [--ttl-ms MS] [--control FILE] [--log FILE]
 *
 * Listens on 127.0.0.1 (a free port, written to PORTFILE once it listens)
 * and answers, one connection at a time, Connection: close:
 *
 *   PUT /latest/api/token            200 a new session token; 400 without
 *                                    X-aws-ec2-metadata-token-ttl-seconds
 *   GET /latest/meta-data/iam/security-credentials/
 *                                    200 R; 401 without a token it issued
 *   GET /latest/meta-data/iam/security-credentials/R
 *                                    200 {"Code":"Success",...,"Expiration":
 *                                    now + MS (default 3600000), whole seconds}
 *   anything else                    404
 *
 * --control FILE is read at every request; its first word changes the
 * answers: "fail" 500 for the credentials, "wrong" a wrong secret,
 * "norole" 404 for the role listing, "notoken" 403 for the token, "garbage"
 * a body that is not JSON; anything else (or no file) the normal answers.
 * --log FILE gets one line per request: "METHOD PATH STATUS". Ends on
 * SIGTERM or SIGINT. The secret is never printed (the log has none). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define REQ_MAX 8192
#define TOKENS_MAX 256

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static struct {
	const char *access_key, *secret_key, *token, *role, *control, *log;
	long ttl_ms;
	char tokens[TOKENS_MAX][40];
	int ntokens;
} C;

static void usage(void)
{
	fprintf(stderr, "usage: imds PORTFILE --access-key K --secret-key S [--token T] "
			"[--role R] [--ttl-ms MS] [--control FILE] [--log FILE]\n");
	exit(100);
}

static void control_word(char *out, size_t n)
{
	FILE *f;

	out[0] = '\0';
	if (!C.control || !(f = fopen(C.control, "r")))
		return;
	if (fscanf(f, "%31s", out) != 1)
		out[0] = '\0';
	fclose(f);
	(void)n;
}

static void log_line(const char *method, const char *path, int status)
{
	FILE *f;

	if (!C.log || !(f = fopen(C.log, "a")))
		return;
	fprintf(f, "%s %s %d\n", method, path, status);
	fclose(f);
}

/* The value of header name in the request head (case-insensitive), or NULL. */
static const char *header(char *head, const char *name, char *out, size_t n)
{
	char *p = head;
	size_t len = strlen(name);

	while ((p = strstr(p, "\r\n")) != NULL) {
		p += 2;
		if (strncasecmp(p, name, len) == 0 && p[len] == ':') {
			char *v = p + len + 1, *e;

			while (*v == ' ')
				v++;
			e = strstr(v, "\r\n");
			if (!e)
				return NULL;
			snprintf(out, n, "%.*s", (int)(e - v), v);
			return out;
		}
	}
	return NULL;
}

static void reply(int fd, int status, const char *body)
{
	char head[256];
	const char *text = status == 200   ? "OK"
			   : status == 400 ? "Bad Request"
			   : status == 401 ? "Unauthorized"
			   : status == 403 ? "Forbidden"
			   : status == 404 ? "Not Found"
					   : "Internal Server Error";
	size_t n = strlen(body);
	int hn = snprintf(head, sizeof(head),
			  "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			  "Connection: close\r\n\r\n",
			  status, text, n);

	if (write(fd, head, (size_t)hn) < 0 || write(fd, body, n) < 0)
		perror("imds: write");
}

static int known_token(const char *t)
{
	int i;

	for (i = 0; i < C.ntokens; i++)
		if (strcmp(C.tokens[i], t) == 0)
			return 1;
	return 0;
}

static void handle(int fd)
{
	char req[REQ_MAX + 1], method[16], path[1024], val[256], ctl[32], body[8192];
	size_t len = 0;
	int status = 404;
	char *end;

	/* the head (bodies are empty) */
	while (len < REQ_MAX) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t got;

		if (poll(&p, 1, 5000) <= 0)
			return;
		got = read(fd, req + len, REQ_MAX - len);
		if (got <= 0)
			return;
		len += (size_t)got;
		req[len] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	req[len] = '\0';
	end = strstr(req, "\r\n\r\n");
	if (!end || sscanf(req, "%15s %1023s", method, path) != 2) {
		reply(fd, 400, "bad request\n");
		return;
	}
	end[2] = '\0'; /* the head ends with its last header's \r\n */
	control_word(ctl, sizeof(ctl));
	body[0] = '\0';
	if (strcmp(method, "PUT") == 0 && strcmp(path, "/latest/api/token") == 0) {
		if (strcmp(ctl, "notoken") == 0) {
			status = 403;
		} else if (!header(req, "X-aws-ec2-metadata-token-ttl-seconds", val, sizeof(val))) {
			status = 400;
		} else {
			char *t = C.tokens[C.ntokens % TOKENS_MAX];

			snprintf(t, sizeof(C.tokens[0]), "imds-token-%d-%ld", C.ntokens,
				 (long)getpid());
			if (C.ntokens < TOKENS_MAX)
				C.ntokens++;
			snprintf(body, sizeof(body), "%s", t);
			status = 200;
		}
	} else if (strcmp(method, "GET") == 0 &&
		   strncmp(path, "/latest/meta-data/iam/security-credentials/", 43) == 0) {
		const char *rest = path + 43;

		if (!header(req, "X-aws-ec2-metadata-token", val, sizeof(val)) ||
		    !known_token(val)) {
			status = 401;
		} else if (*rest == '\0') {
			if (strcmp(ctl, "norole") == 0) {
				status = 404;
			} else {
				snprintf(body, sizeof(body), "%s", C.role);
				status = 200;
			}
		} else if (strcmp(rest, C.role) == 0) {
			struct timeval tv;
			struct tm tm;
			time_t exp;
			char iso[32];

			gettimeofday(&tv, NULL);
			exp =
			    (time_t)(((long long)tv.tv_sec * 1000 + tv.tv_usec / 1000 + C.ttl_ms) /
				     1000);
			gmtime_r(&exp, &tm);
			strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
			if (strcmp(ctl, "fail") == 0) {
				status = 500;
			} else if (strcmp(ctl, "garbage") == 0) {
				snprintf(body, sizeof(body), "<html>not json</html>");
				status = 200;
			} else {
				snprintf(
				    body, sizeof(body),
				    "{\n  \"Code\" : \"Success\",\n  \"LastUpdated\" : "
				    "\"2024-01-01T00:00:00Z\",\n  \"Type\" : \"AWS-HMAC\",\n"
				    "  \"AccessKeyId\" : \"%s\",\n  \"SecretAccessKey\" : \"%s\",\n"
				    "  \"Token\" : \"%s\",\n  \"Expiration\" : \"%s\"\n}",
				    C.access_key,
				    strcmp(ctl, "wrong") == 0 ? "wrongsecretwrongsecret"
							      : C.secret_key,
				    C.token, iso);
				status = 200;
			}
		}
	}
	if (status != 200)
		snprintf(body, sizeof(body), "status %d\n", status);
	reply(fd, status, body);
	log_line(method, path, status);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	struct sigaction sa;
	const char *portfile;
	char tmp[4096];
	FILE *f;
	int s, i, one = 1;

	if (argc < 2)
		usage();
	portfile = argv[1];
	C.token = "imds-session-token";
	C.role = "keep-test-role";
	C.ttl_ms = 3600000;
	for (i = 2; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (strcmp(o, "--access-key") == 0)
			C.access_key = v;
		else if (strcmp(o, "--secret-key") == 0)
			C.secret_key = v;
		else if (strcmp(o, "--token") == 0)
			C.token = v;
		else if (strcmp(o, "--role") == 0)
			C.role = v;
		else if (strcmp(o, "--ttl-ms") == 0)
			C.ttl_ms = strtol(v, NULL, 10);
		else if (strcmp(o, "--control") == 0)
			C.control = v;
		else if (strcmp(o, "--log") == 0)
			C.log = v;
		else
			usage();
		i++;
	}
	if (!C.access_key || !C.secret_key || C.ttl_ms <= 0)
		usage();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 16) != 0 ||
	    getsockname(s, (struct sockaddr *)&a, &alen) != 0) {
		perror("imds: listen");
		return 111;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0 ||
	    rename(tmp, portfile) != 0) {
		perror("imds: port file");
		return 111;
	}
	while (!stop_flag) {
		struct pollfd p = {s, POLLIN, 0};
		int c;

		if (poll(&p, 1, 200) <= 0)
			continue;
		c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		handle(c);
		close(c);
	}
	close(s);
	return 0;
}
