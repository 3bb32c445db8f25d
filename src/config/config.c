// SPDX-License-Identifier: GPL-2.0-or-later
/* config: the JSON file turned into an immutable struct config.
 *
 * One static table, specs[], lists every key (nested ones as "ttl.min"):
 * its handler, its range or choices, its default and its documentation.
 * Parsing walks the JSON once to match every member to a row (unknown keys,
 * keys given twice and non-objects where an object belongs fail here),
 * then calls each row's handler in table order with the member, or with
 * NULL when the key is absent so that the handler applies the default
 * through the same code path as input. The handlers (what one value
 * means) are in configkeys.c; this file keeps the table, the walk, the
 * checks that span keys and the reference generated from the table. Table order
 * matters: listen comes before upstreams (the loop check and the resolv.conf
 * default need it). config_print_reference() renders the same table as
 * Markdown, so the documentation cannot drift from the parser.
 *
 * Errors are written to the caller's buffer as "KEY.PATH: reason", never
 * logged: main decides. Values echoed in errors are cut and stripped of
 * control bytes, since they may come from anywhere. cJSON keeps duplicate
 * members and decodes \u0000 into a string terminator, so both are caught
 * here: the first by the table walk, the second by a scan of the text. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "config/config.h"
#include "sets/sets.h"
#include "config/configkeys.h"
#include "base/instance.h"
#include "config/subjects.h"
#include "config/policy.h"

#ifndef CONFIG_DEFAULT_PATH
#error "CONFIG_DEFAULT_PATH comes from src/config/CMakeLists.txt (sysconfdir)"
#endif

#define N_SPECS (sizeof(specs) / sizeof(specs[0]))
/* Every key of the table, comma-separated, fits (unknown_key). */
#define KNOWN_KEYS_MAX 2048

static int find_spec(const char *prefix, const char *key);
static int collect(struct pctx *p, const cJSON *obj, const char *prefix);
static int known_keys(const char *prefix, const char **names, size_t *n,
		      char *buf, size_t cap);
static int unknown_key(struct pctx *p, const char *prefix, const char *key,
		       const char *path);
static int finish(struct pctx *p);
static int check_wildcards(struct pctx *p);
static void set_choices(struct pctx *p);
static bool given_of(const struct pctx *p, const char *path);
static uint32_t choice_of(const struct pctx *p, const char *path);
static int check_nul_escape(const char *text, size_t len, char *err,
			    size_t errlen);
static const char *syntax_hint(const char *text, size_t off);
static void err_at(const char *text, size_t off, const char *what, char *err,
		   size_t errlen);
static void print_cell_default(FILE *f, const struct key_spec *k);
static void print_cell_type(FILE *f, const struct key_spec *k);
static int parse_json(const char *text, size_t len, char **buf, cJSON **root,
		      char *err, size_t errlen);
static int apply_specs(struct pctx *p, const cJSON *root);

static const char *const mode_names[] = {"enforce", "audit", "off", NULL};
static const char *const deny_names[] = {"nxdomain", "refused", NULL};
static const char *const inbound_names[] = {"allow", "deny", NULL};
static const char *const hairpin_names[] = {"allow", "deny", "fence", NULL};
static const char *const bind_names[] = {"client", "interfaces", NULL};
static const char *const audit_denied_names[] = {"forward", "local", NULL};
static const char *const level_names[] = {"error", "warning", "info", "debug",
					  NULL};
static const char *const format_names[] = {"text", "json", "journal", NULL};
static const char *const listen_defs[] = {"127.0.0.1:53", "[::1]:53", NULL};
static const char *const ports_defs[] = {"tcp/80", "tcp/443", NULL};
static const char *const set4_defs[] = {"dnsfence4", NULL};
static const char *const set6_defs[] = {"dnsfence6", NULL};
static const char *const user_defs[] = {"dnsfence", NULL};
static const char *const state_dir_defs[] = {CONFIG_DEFAULT_STATE_DIR, NULL};
static const char *const scope_names[] = {"output", "forward", NULL};
static const char *const control_defs[] = {CONFIG_DEFAULT_CONTROL, NULL};
static const char *const bool_names[] = {"false", "true", NULL};
static const char *const tls_ports_defs[] = {"tcp/443", NULL};
static const char *const http_ports_defs[] = {"tcp/80", NULL};
static const char *const quic_ports_defs[] = {"udp/443", NULL};
static const char *const loopback_names[] = {"all", "listener", NULL};

#define OFF(f) offsetof(struct config, f)

static const struct key_spec specs[] = {
    {"listen", K_LIST, configkeys_list, 1, .item = configkeys_item_listen,
     .defs = listen_defs, .type = "array of \"addr:port\" / \"[v6]:port\"",
     .meaning = "UDP and TCP listeners; a port is required, each entry "
		"once. On a wildcard address (`0.0.0.0`, `::`) each UDP reply "
		"leaves from the address its query was sent to. An "
		"IPv4-mapped IPv6 address (`[::ffff:127.0.0.1]:53`) is an "
		"error: its packets are IPv4; write the IPv4 form"},
    {"upstreams", K_LIST, configkeys_upstreams, 1,
     .item = configkeys_item_upstream,
     .type = "array of \"addr[:port]\" / \"[v6][:port]\"",
     .def_doc = "the `nameserver` lines of /etc/resolv.conf at start "
		"(port 53), minus our own listen addresses; when it names "
		"only those, the ones of the original that the container "
		"entrypoint saved in /run/dnsfence/resolv.conf.orig (used "
		"only if root's and not group- or world-writable)",
     .meaning = "where allowed names are resolved; one of our own listen "
		"endpoints is an error (a loop), and so are `0.0.0.0` and "
		"`::` (the kernel sends them to a local port) and an "
		"IPv4-mapped IPv6 address (write the IPv4 form). A loopback "
		"upstream, or one on an address of the namespace, needs "
		"`local_upstream_user`"},
    {"allow", K_LIST, configkeys_list, .item = configkeys_item_name,
     .type = "array of names",
     .meaning = "`example.com` matches that name only; `*.example.com` "
		"matches every name below it, at any depth, but not "
		"example.com itself. Lower-cased, one trailing dot "
		"removed, duplicates dropped"},
    {"allow_public_suffix_wildcards", K_CHOICE, configkeys_bool,
     .choices = bool_names, .type = "boolean", .def_doc = "`false`",
     .meaning = "let `allow` hold a wildcard on a public suffix (`*.com`, "
		"`*.co.uk`, `*.github.io`: Public Suffix List, libpsl), "
		"which allows every domain registered under it; refused "
		"(exit 2) unless this is true"},
    {"ecosystems", K_LIST, configkeys_list, .item = configkeys_item_ecosystem,
     .type = "array of preset names",
     .meaning = "named host lists added to `allow`; every preset and its "
		"names are listed under \"Ecosystem presets\" below "
		"(`dnsfence validate --effective` prints them expanded)"},
    {"deny_rcode", K_CHOICE, configkeys_choice, .choices = deny_names,
     .meaning = "answer to a name not allowed. With `\"refused\"`, "
		"musl (Alpine) waits its whole timeout (5 s) on each denied "
		"name and stops walking the search list at the first "
		"REFUSED, which breaks Kubernetes-style search domains; "
		"`validate` warns about it"},
    {"qtypes", K_LIST, configkeys_list, .item = configkeys_item_qtype,
     .type = "array of query types (\"LOC\", \"TYPE29\")", .def_doc = "`[]`",
     .meaning = "query types forwarded for allowed names besides the "
		"common ones (A, NS, CNAME, SOA, PTR, MX, TXT, AAAA, SRV, "
		"NAPTR, DS, SSHFP, DNSKEY, TLSA, SVCB, HTTPS, CAA). Any other "
		"type gets REFUSED with Extended DNS Error 21 and never "
		"leaves; meta, reserved and private-use types (TYPE0, OPT, "
		"128..255, 65280..65535) cannot be listed; ANY gets RFC "
		"8482's synthesized HINFO. Each type a workload may choose "
		"is another few bits per question to the name's servers "
		"(docs/security.md)"},
    {"wildcard_budget", K_GROUP, NULL, .type = "object",
     .meaning = "what a workload may ask below an allowed wildcard "
		"(`*.example.com`), whose every new name is a message of its "
		"choosing to example.com's servers (docs/security.md gives "
		"the bandwidth left)"},
    {"wildcard_budget.burst", K_INT, configkeys_int, 1, 10000000, 600, 1,
     OFF(budget_burst),
     .meaning = "new (neither cached nor in flight) upstream questions one "
		"client address may send below one wildcard entry at once; "
		"the entry itself takes 4 times as many from all clients "
		"together (in scope forward: from all clients of one "
		"fenced interface, each interface its own). Over it: REFUSED "
		"with Extended DNS Error 18, "
		"counted (`budget_refused`) and logged once a minute per "
		"bucket; audit mode logs and forwards (`budget_audit`)"},
    {"wildcard_budget.per_minute", K_INT, configkeys_int, 1, 600000000, 120, 1,
     OFF(budget_per_minute),
     .meaning = "how fast that bucket refills, questions a minute (the "
		"entry's: 4 times this)"},
    {"wildcard_budget.depth_max", K_INT, configkeys_int, 1, 127, 6, 1,
     OFF(budget_depth_max),
     .meaning = "labels a name may have below the wildcard; a deeper name "
		"is denied like a name off the allowlist (`deny_rcode`, "
		"Extended DNS Error 15)"},
    {"wildcard_budget.label_max", K_INT, configkeys_int, 1, 63, 63, 1,
     OFF(budget_label_max),
     .meaning = "bytes a label below the wildcard may have (63, the DNS "
		"maximum, caps nothing); a longer one is denied likewise"},
    {"sets", K_GROUP, NULL, .type = "object",
     .meaning = "the kernel ipsets (hash:ip with timeout)"},
    {"sets.ipv4", K_STRING, configkeys_set_name, .off = OFF(set4),
     .defs = set4_defs, .type = "set name",
     .meaning = "IPv4 set: 1..31 of `A-Z a-z 0-9 _ . -`, not starting "
		"with `-`"},
    {"sets.ipv6", K_STRING, configkeys_set_name, .off = OFF(set6),
     .defs = set6_defs, .type = "set name",
     .meaning =
	 "IPv6 set; must differ from sets.ipv4. Its name, cut to 27 "
	 "bytes, with `-mld` is also the MLD set's (the solicited-node "
	 "groups of the namespace's own addresses, docs/firewall.md rule "
	 "4)"},
    {"sets.maxelem", K_INT, configkeys_int, 1, 2147483647, 65536, 1,
     OFF(maxelem), .meaning = "capacity of each set when dnsfence creates it"},
    {"sets.client_maxelem", K_INT, configkeys_int, 1, 2147483647, 1048576, 1,
     OFF(client_maxelem),
     .meaning = "scope forward with `bind` \"client\": capacity of each "
		"client set (its address set's name cut to 24 bytes, with "
		"`-client`: one entry per client address, port and "
		"answered address, about 60 bytes each for IPv4 and 80 for "
		"IPv6; docs/firewall.md)"},
    {"ttl", K_GROUP, NULL, .type = "object",
     .meaning = "clamp for set timeouts"},
    {"ttl.min", K_INT, configkeys_int, 1, 2147483, 60, 1, OFF(ttl_min),
     .meaning = "shortest set timeout, seconds (0 would mean \"forever\" "
		"to the kernel)"},
    {"ttl.max", K_INT, configkeys_int, 1, 2147483, 86400, 1, OFF(ttl_max),
     .meaning = "longest set timeout, seconds; at least ttl.min"},
    {"ports", K_LIST, configkeys_list, .item = configkeys_item_port,
     .defs = ports_defs, .type = "array of \"tcp/N\", \"udp/N\", \"tcp/N-M\"",
     .meaning = "where set members may be reached"},
    {"allow_cidrs", K_LIST, configkeys_list, .item = configkeys_item_cidr,
     .type = "array of CIDRs",
     .meaning = "always reachable (on `ports`), no DNS needed; answers in "
		"these ranges are admitted even when internal. Host "
		"bits must be zero"},
    {"user", K_STRING, configkeys_user, .defs = user_defs,
     .type = "name or uid",
     .def_doc = "`\"dnsfence\"`, falling back to `nobody`",
     .meaning = "the daemon's uid after setup; give it a user of its own "
		"(a warning names nobody; uid 0 is refused). The rules trust "
		"the socket `mark`, not the uid. A name has no blanks, control "
		"characters or ':'; a uid is 0..4294967294 and is printed "
		"back as a string"},
    {"local_upstream_user", K_STRING, subjects_local_upstream_user,
     .type = "name or uid", .def_doc = "none",
     .meaning = "the user a resolver beside dnsfence runs as (a local "
		"cache on a loopback address, or on an address of the "
		"namespace such as the pod's own): the fence takes answers "
		"from a socket of the namespace only from this user's. "
		"Without it no process of the namespace may answer "
		"dnsfence's upstream questions (with `subjects`: no "
		"subject). Required, in output scope with a fence and no "
		"`subjects`, when an upstream is on a loopback address "
		"(but Docker's 127.0.0.11:53, which Docker redirects to a "
		"port its own socket holds; checked by every command) or on "
		"an address of the network namespace (checked by validate, "
		"setup, run and reload, where they run): while that resolver "
		"is down or restarting, any process of the namespace could "
		"bind its port and answer dnsfence with any address for an "
		"allowed name. A process running as this user can still do "
		"so"},
    {"mark", K_INT, configkeys_int, 1, 2147483647, 0x64000000, 1, OFF(mark),
     .meaning = "socket mark (SO_MARK) of the daemon's sockets to the "
		"upstreams. The fence lets traffic to an upstream address "
		"leave only when a packet's whole mark equals this value, "
		"which only a holder of CAP_NET_ADMIN can set. The default, "
		"0x64000000 (1677721600), keeps clear of the bits kube-proxy "
		"(0x4000, 0x8000), Cilium (0x0f00), Istio (0x539) and the "
		"AWS VPC CNI (0x80) use; change it if another program in the "
		"namespace marks packets with it"},
    {"inbound", K_CHOICE, configkeys_choice, .choices = inbound_names,
     .meaning = "allow: a connection a peer opens into this namespace gets "
		"its replies (the ESTABLISHED accept works both ways); deny: "
		"only connections the namespace opened itself get packets "
		"out, so no server in it can answer a peer outside (health "
		"probes and services included). See docs/security.md"},
    {"mode", K_CHOICE, configkeys_choice, .choices = mode_names,
     .meaning = "audit: allow and log what enforce would block; off: "
		"install no rules"},
    {"audit_denied", K_CHOICE, configkeys_choice, .choices = audit_denied_names,
     .meaning = "audit mode only. forward: a name not on the allowlist is "
		"forwarded upstream and answered (logged as would deny), and "
		"DNS to other resolvers is let through (logged): the learning "
		"run sees everything, and DNS can carry data out. local: such "
		"a name is answered locally as enforce answers it, and logged "
		"as denied; DNS to other resolvers and to the upstreams from "
		"the workload is rejected as in enforce; every other flow is "
		"still only logged (would block). For learning runs that must "
		"not leak through DNS"},
    {"upstream_timeout", K_INT, configkeys_int, 1, 60, 3, 1000,
     OFF(upstream_timeout_ms),
     .meaning = "seconds before an upstream query fails (SERVFAIL), c-ares' "
		"retries included. Below the 5 s a stub resolver (glibc, "
		"musl, Go) waits before its first retry, so the client gets "
		"the failure instead of asking again"},
    {"max_inflight", K_INT, configkeys_int, 16, 60000, 2048, 1,
     OFF(max_inflight),
     .meaning = "upstream questions in flight at most; a query beyond it "
		"gets SERVFAIL at once (Extended DNS Error 0 \"too many "
		"queries in flight\"). One client address may hold 3/4 of "
		"them. Denied names and cache hits are answered whatever the "
		"count"},
    {"failure_ttl", K_INT, configkeys_int, 1, 300, 5, 1, OFF(failure_ttl),
     .meaning = "seconds an upstream failure (timeout, unreachable, "
		"SERVFAIL, REFUSED, malformed answer) is remembered for its "
		"question: repeats get SERVFAIL at once (RFC 9520)"},
    {"serve_stale", K_INT, configkeys_int, 0, 604800, 86400, 1,
     OFF(serve_stale),
     .meaning = "seconds past its TTL an answer may still be served when "
		"the upstream fails (RFC 8767), with a TTL of 30 s and its "
		"addresses put back in the sets first; 0 turns it off"},
    {"guard_interval", K_INT, configkeys_int, 1, 3600, 5, 1,
     OFF(guard_interval),
     .meaning = "seconds between checks that the rules and sets are "
		"still in place"},
    {"log", K_GROUP, NULL, .type = "object", .meaning = "logging"},
    {"log.level", K_CHOICE, configkeys_choice, .choices = level_names, .def = 2,
     .meaning = "least severe level logged"},
    {"log.format", K_CHOICE, configkeys_choice, .choices = format_names,
     .meaning = "text lines, or one JSON object per line; journal: text "
		"lines with an sd-daemon `<N>` priority prefix and no "
		"timestamp, for a daemon whose stderr goes to journald "
		"without `JOURNAL_STREAM` or `NOTIFY_SOCKET` set (with "
		"either, run and serve write that form anyway)"},
    {"log.queries", K_CHOICE, configkeys_bool, .choices = bool_names,
     .type = "boolean", .def_doc = "`false`",
     .meaning = "log each allowed question too (event `query_allowed`, "
		"with the allow entry that matched and the asking uid of a "
		"loopback client), at info, rate-limited like denials (20 at "
		"once, 5 a second, the rest counted); live on reload"},
    {"metrics", K_STRING, configkeys_metrics,
     .type = "\"addr:port\" / \"[v6]:port\" or null", .def_doc = "`null` (off)",
     .meaning = "serve Prometheus metrics over HTTP at `/metrics` "
		"(docs/metrics.md); anything that can reach the address "
		"can read them, so keep it on loopback"},
    {"state_dir", K_STRING, configkeys_state_dir, .defs = state_dir_defs,
     .type = "absolute path",
     .def_doc = "`\"/run/dnsfence\"`; in a network namespace `ip netns` "
		"named NAME, `\"/run/dnsfence-NAME\"`",
     .meaning = "the daemon's own directory: its lock and pid "
		"(`dnsfence.pid`: a second daemon on the same directory is "
		"refused), the control socket by default, the set entries' "
		"names kept over a restart (`prov.state`), the replaced "
		"upstreams whose rules are held against late answers "
		"(`held-upstreams`, docs/firewall.md rule 2) and "
		"`suggest.json`, "
		"the names and blocked flows `dnsfence suggest` reads after "
		"the run; created (mode 0750, owned by `user`) when missing. "
		"It must be a directory (not a symbolic link) owned by root "
		"or `user` that no group and no other may write, and every "
		"state file in it a regular file of root or `user` without "
		"group or other write: setup, run and serve refuse another "
		"(exit 2, naming the owner and mode found), and a state file "
		"that fails the rule is not loaded (another local user who "
		"made the directory first, below a world-writable folder, "
		"could otherwise plant what a restart trusts). Temporary "
		"files are created exclusively. "
		"Give each daemon on one host its own (docs/deployment.md)"},
    {"scope", K_CHOICE, configkeys_choice, .choices = scope_names,
     .meaning = "output: fence this network namespace's own egress (the "
		"OUTPUT chain). forward: run on the host and fence what "
		"comes in on `interfaces` (a container bridge or veth): "
		"forwarded traffic (FORWARD, or Docker's DOCKER-USER) and "
		"traffic to the host itself (INPUT, where only DNS to our "
		"`listen` addresses passes); the host's own OUTPUT is left "
		"alone. `listen` must then name addresses on the host side "
		"of those interfaces, not loopback or a wildcard. See "
		"docs/firewall.md"},
    {"interfaces", K_LIST, configkeys_list, .item = configkeys_item_interface,
     .type = "array of interface names",
     .meaning = "scope forward only, and required there: the bridge or "
		"veth names fenced traffic comes in on, 1..15 of `A-Z a-z "
		"0-9 _ . -`, not starting with `-`; a trailing `+` matches "
		"every name with that prefix (`veth+`). `lo`, and a "
		"wildcard that matches it or every name, are refused"},
    {"host_allow", K_LIST, configkeys_list, .item = configkeys_item_host_allow,
     .type = "array of \"tcp/addr:port\" / \"udp/[v6]:port\"",
     .meaning = "scope forward only: services of the host itself that the "
		"fenced interfaces may reach besides dnsfence's DNS (a "
		"proxy on the gateway address, say). One address each, not "
		"loopback or a wildcard; everything else on the host stays "
		"out of reach"},
    {"source_cidrs", K_LIST, configkeys_list,
     .item = configkeys_item_source_cidr, .type = "array of CIDRs",
     .def_doc = "`[]` (the host's routes decide)",
     .meaning = "scope forward only: the source addresses a packet coming "
		"in on `interfaces` may carry; any other is dropped before "
		"it makes conntrack state, reaches the listener or earns a "
		"reject. Empty: a source is accepted when the host's own "
		"route back to it leaves by the interface the packet came "
		"in on (the networks of the host's addresses and routes on "
		"that interface). Listing CIDRs of a family replaces that "
		"check for the family with exactly these ranges (to narrow "
		"it, or to add a range routed elsewhere); IPv6 link-local "
		"and unspecified sources (neighbour discovery) always pass. "
		"Host bits must be zero. See docs/firewall.md"},
    {"hairpin", K_CHOICE, configkeys_choice, .choices = hairpin_names, .def = 2,
     .meaning = "scope forward only: traffic that comes in on a fenced "
		"interface and goes out on one (container to container "
		"through the gateway, or on a bridge with br_netfilter). "
		"fence: it meets the same rules as any other destination "
		"(set members and `allow_cidrs` on `ports`; list a "
		"database's address in `allow_cidrs` for an app to reach "
		"it); allow: it passes unfenced (the default before this "
		"key had \"fence\"; set it to keep that); deny: it is "
		"rejected in every state, and setup refuses (exit 3) while "
		"a fenced bridge's switched traffic would not meet the "
		"rules (`net.bridge.bridge-nf-call-iptables` / `-ip6tables` "
		"0 or absent in the host's network namespace). Traffic a "
		"bridge switches itself meets the rules only with "
		"br_netfilter loaded, as Docker does: with \"fence\" setup "
		"and check warn when it is off. See docs/firewall.md"},
    {"bind", K_CHOICE, configkeys_choice, .choices = bind_names, .def = 0,
     .meaning = "scope forward only: whom an answer opens its addresses "
		"for. client: the client address that asked, on each of "
		"`ports`, and no other container; an answer then carries "
		"only addresses of the family it was asked over (the fence "
		"knows no client address of the other family: ask over "
		"IPv6 for IPv6 destinations). interfaces: every container "
		"behind the fenced interfaces (the default before this key "
		"had \"client\"; for a DNS forwarder that asks for its "
		"clients). Cannot change on reload. See docs/firewall.md"},
    {"subjects", K_GROUP, NULL, .type = "object",
     .meaning = "scope output only: fence these processes only, and leave "
		"every other process of the namespace its own egress and "
		"resolver. Their packets meet the fence (owner and cgroup "
		"matches in OUTPUT), their DNS to any resolver on port 53 "
		"is answered by dnsfence (nat OUTPUT). None given: the whole "
		"namespace is fenced. See docs/security.md for what a "
		"subject can still reach. Cannot change on reload"},
    {"subjects.users", K_LIST, configkeys_list, .item = subjects_item_user,
     .type = "array of user names or uids",
     .meaning = "processes running as these uids; a name must resolve "
		"when the config is read (printed back as its uid); not "
		"root, not the daemon's `user`"},
    {"subjects.groups", K_LIST, configkeys_list, .item = subjects_item_group,
     .type = "array of group names or gids",
     .meaning = "processes with one of these gids, as their group or a "
		"supplementary one; not gid 0"},
    {"subjects.cgroups", K_LIST, configkeys_list, .item = subjects_item_cgroup,
     .type = "array of cgroup v2 paths",
     .meaning = "processes in these cgroups or below them, written as "
		"/proc/PID/cgroup shows them after `0::` "
		"(`/system.slice/agent.service`); each must exist when the "
		"rules are installed (the kernel resolves it then)"},
    {"subjects.loopback", K_CHOICE, configkeys_choice,
     .choices = loopback_names,
     .meaning = "all: subjects reach every loopback service (which may "
		"make requests for them); listener: only dnsfence's "
		"listeners and `subjects.loopback_ports`"},
    {"subjects.loopback_ports", K_LIST, configkeys_list,
     .item = subjects_item_lo_port,
     .type = "array of \"tcp/N\", \"udp/N\", \"tcp/N-M\"",
     .meaning = "with `subjects.loopback` \"listener\": the loopback "
		"ports subjects may still reach"},
    {"control", K_GROUP, NULL, .type = "object",
     .meaning = "the running daemon's control socket and config watch "
		"(`dnsfence reload`, `dnsfence status`)"},
    {"name_check", K_GROUP, NULL, .type = "object",
     .meaning = "the check of each new flow's first bytes against the "
		"answers (docs/firewall.md): a set member shares its address "
		"with every other name of its front end, so the name the "
		"client asks the server for must be allowed and answered "
		"with that very address. Scope output only: with `scope` "
		"\"forward\" it is off, and a `mode` other than \"off\" is "
		"refused (the forward chain checks addresses only)"},
    {"name_check.mode", K_CHOICE, configkeys_choice, .choices = mode_names,
     .meaning = "enforce: a TLS flow to a set member on `tls_ports` whose "
		"ClientHello names no server, a name not allowed, or a name "
		"that was not answered with the flow's address is reset "
		"(and logged), and a QUIC flow on `quic_ports` likewise "
		"dropped; audit: logged and let through; off: "
		"addresses only. In mode audit the check only logs. While "
		"the check is on, HTTPS and SVCB answers reach clients "
		"without their `ech` param (so the client sends a readable "
		"server name; a record whose `mandatory` lists `ech` is left "
		"out). Live on reload"},
    {"name_check.tls_ports", K_LIST, configkeys_list,
     .item = configkeys_item_tls_port, .defs = tls_ports_defs,
     .type = "array of \"tcp/N\"",
     .meaning = "the ports whose flows are TLS and checked (each also in "
		"`ports` to be reachable at all); every other port of "
		"`ports` stays address-only"},
    {"name_check.http_ports", K_LIST, configkeys_list,
     .item = configkeys_item_http_port, .defs = http_ports_defs,
     .type = "array of \"tcp/N\"",
     .meaning = "the ports whose flows are plain HTTP/1.x and checked by "
		"the host of their first request (the absolute-form "
		"target's, else the one Host header; none, two, or an IP "
		"literal is refused), as `tls_ports` by the server name. "
		"Each also in `ports` to be reachable; none may be in "
		"`tls_ports`"},
    {"name_check.quic_ports", K_LIST, configkeys_list,
     .item = configkeys_item_quic_port, .defs = quic_ports_defs,
     .type = "array of \"udp/N\"",
     .meaning = "the ports whose flows are QUIC version 1 and checked the "
		"same way: the server name of the ClientHello in the "
		"client's Initial packets (decrypted with the keys RFC 9001 "
		"derives from the connection ID). A flow whose first packet "
		"is not such an Initial, or that names a server not allowed, "
		"is dropped. Queued only when also in `ports`; a udp port of "
		"`ports` outside this list is address-only, and the daemon "
		"says so at start. A key of its own rather than udp entries "
		"in `tls_ports`: the protocol picks another reader (the "
		"Initial's decryption) and another refusal (a drop: UDP has "
		"no reset), and `[]` leaves QUIC address-only while TLS over "
		"TCP stays checked"},
    {"control.socket", K_STRING, configkeys_path, .off = OFF(control_socket),
     .defs = control_defs, .type = "absolute path",
     .def_doc = "`state_dir` + `\"/control.sock\"`",
     .meaning = "unix socket of `reload`, `status` and `suggest`, mode "
		"0660, owned by root and the daemon's group; only uid 0 and "
		"the daemon's uid or gid are served. A daemon that finds "
		"another one answering here refuses to start (the DNS "
		"process a killed daemon leaves, which exits a moment "
		"later, is waited for up to 3 s). Cannot change on reload"},
    {"control.watch", K_CHOICE, configkeys_bool, .choices = bool_names,
     .def = 1, .type = "boolean", .def_doc = "`true`",
     .meaning = "reload when the config file changes (inotify on its "
		"directory, so a Kubernetes ConfigMap update is seen)"},
    {"selftest", K_CHOICE, configkeys_bool, .choices = bool_names, .def = 1,
     .type = "boolean", .def_doc = "`true`",
     .meaning = "the readiness gate: before READY=1, `run` and `serve` "
		"(enforce mode, scope output) probe from the workload's "
		"side as `user` without capabilities or the socket mark, "
		"as `dnsfence selftest` does, and exit 1 naming the first "
		"probe that got around the fence instead of becoming ready. "
		"`false` skips it (docs/deployment.md)"},
};

static const struct {
	const char *name, *meaning;
} env_specs[] = {
    {"DNSFENCE_CONFIG", "the config file when `-c` is not given "
			"(default `SYSCONFDIR/dnsfence/dnsfence.json`, "
			"/etc/dnsfence/dnsfence.json for the prefix /usr)"},
    {"DNSFENCE_MODE", "overrides `mode` (`enforce`, `audit` or `off`); "
		      "empty means unset"},
    {"DNSFENCE_EXTRA_HOSTS",
     "comma-separated names appended to `allow` (blanks trimmed, empty "
     "items skipped, each validated like `allow`; errors name "
     "`DNSFENCE_EXTRA_HOSTS[i]`, counting every comma-separated item "
     "from 0)"},
    {"DNSFENCE_JOURNAL_SOCKET",
     "run and serve: send the log to the journal's native socket at this "
     "path, each line one datagram with its event fields "
     "(docs/metrics.md); under systemd, when stderr is the journal's "
     "stream (`JOURNAL_STREAM`), /run/systemd/journal/socket is used "
     "without it"},
};

static int find_spec(const char *prefix, const char *key)
{
	size_t pl = strlen(prefix);

	for (size_t i = 0; i < N_SPECS; i++) {
		const char *sp = specs[i].path;

		if (pl > 0 && (strncmp(sp, prefix, pl) != 0 || sp[pl] != '.'))
			continue;
		if (pl > 0)
			sp += pl + 1;
		else if (strchr(sp, '.') != NULL)
			continue;
		if (strcmp(sp, key) == 0)
			return (int)i;
	}
	return -1;
}

/* The keys of the object at prefix ("" the top level): their names
 * into names[] (N_SPECS of them at most), *n, and as one list into buf;
 * -ENOSPC when buf is too small (it holds every key of the table). */
static int known_keys(const char *prefix, const char **names, size_t *n,
		      char *buf, size_t cap)
{
	size_t pl = strlen(prefix), o = 0;

	buf[0] = '\0';
	*n = 0;
	for (size_t i = 0; i < N_SPECS; i++) {
		const char *sp = specs[i].path;

		if (pl > 0 && (strncmp(sp, prefix, pl) != 0 || sp[pl] != '.'))
			continue;
		sp += pl > 0 ? pl + 1 : 0;
		if (strchr(sp, '.') != NULL)
			continue;
		names[(*n)++] = sp;
		int w = snprintf(buf + o, cap - o, "%s%s", o ? ", " : "", sp);
		if (w < 0 || (size_t)w >= cap - o)
			return -ENOSPC;
		o += (size_t)w;
	}
	return 0;
}

/* "unknown key" at path, with the nearest known key and every one. */
static int unknown_key(struct pctx *p, const char *prefix, const char *key,
		       const char *path)
{
	const char *names[N_SPECS], *near;
	char known[KNOWN_KEYS_MAX], mean[96] = "";
	size_t n;
	int rc = known_keys(prefix, names, &n, known, sizeof(known));

	if (rc != 0)
		return rc;
	near = configkeys_nearest(key, names, n);
	if (near != NULL)
		snprintf(mean, sizeof(mean), "; did you mean \"%s\"?", near);
	return configkeys_fail(p, path, "unknown key%s (known: %s)", mean,
			       known);
}

/* Match each member of obj to a row of specs[]; recurse into groups. */
static int collect(struct pctx *p, const cJSON *obj, const char *prefix)
{
	char path[CONFIGKEYS_PATH_LEN], key[72];

	for (const cJSON *it = obj->child; it != NULL; it = it->next) {
		int i = find_spec(prefix, it->string);

		configkeys_show(it->string, key, sizeof(key));
		snprintf(path, sizeof(path), "%s%s%s", prefix,
			 *prefix ? "." : "", key);
		if (i < 0)
			return unknown_key(p, prefix, it->string, path);
		if (p->given[i] != NULL)
			return configkeys_fail(p, path, "given twice");
		p->given[i] = it;
		if (specs[i].kind != K_GROUP)
			continue;
		if (!cJSON_IsObject(it))
			return configkeys_fail(p, path, "expected an object");
		int rc = collect(p, it, specs[i].path);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static bool given_of(const struct pctx *p, const char *path)
{
	for (size_t i = 0; i < N_SPECS; i++) {
		if (strcmp(specs[i].path, path) == 0)
			return p->given[i] != NULL;
	}
	return false;
}

static uint32_t choice_of(const struct pctx *p, const char *path)
{
	for (size_t i = 0; i < N_SPECS; i++) {
		if (strcmp(specs[i].path, path) == 0)
			return p->choice[i];
	}
	return 0;
}

/* What needs more than one key, or the environment. The file's mode is
 * validated even when DNSFENCE_MODE overrides it. */
/* Wildcards on a public suffix, unless allow_public_suffix_wildcards. */
static int check_wildcards(struct pctx *p)
{
	p->c->allow_psl_wildcards =
	    choice_of(p, "allow_public_suffix_wildcards") != 0;
	for (size_t i = 0; !p->c->allow_psl_wildcards && i < p->c->n_allow;
	     i++) {
		if (policy_wildcard_on_public_suffix(p->c->allow[i]))
			return configkeys_fail(
			    p, "allow",
			    "\"%s\" is a wildcard on the public suffix "
			    "\"%s\": it allows every domain registered under "
			    "it. Name the domains (\"*.example%s%s\"), or set "
			    "\"allow_public_suffix_wildcards\": true if that "
			    "is what you mean",
			    p->c->allow[i], p->c->allow[i] + 2, ".",
			    p->c->allow[i] + 2);
	}
	return 0;
}

/* The struct fields of the choice keys (mode apart, which the
 * environment may override). */
static void set_choices(struct pctx *p)
{
	const uint32_t level = choice_of(p, "log.level");
	uint32_t mode;

	p->c->deny_rcode = choice_of(p, "deny_rcode") ? CONFIG_DENY_REFUSED
						      : CONFIG_DENY_NXDOMAIN;
	p->c->inbound_deny = choice_of(p, "inbound") == 1;
	p->c->hairpin_deny = choice_of(p, "hairpin") == 1;
	p->c->hairpin_allow = choice_of(p, "hairpin") == 0;
	p->c->bind_interfaces = choice_of(p, "bind") == 1;
	p->c->audit_denied_local = choice_of(p, "audit_denied") == 1;
	p->c->scope =
	    choice_of(p, "scope") ? CONFIG_SCOPE_FORWARD : CONFIG_SCOPE_OUTPUT;
	p->c->log_level = level == 0   ? LOGL_ERR
			  : level == 1 ? LOGL_WARN
			  : level == 2 ? LOGL_INFO
				       : LOGL_DEBUG;
	p->c->log_format = (enum log_format)choice_of(p, "log.format");
	p->c->log_queries = choice_of(p, "log.queries") != 0;
	p->c->control_watch = choice_of(p, "control.watch") != 0;
	mode = choice_of(p, "name_check.mode");
	p->c->name_check = mode == 2   ? CONFIG_NAME_CHECK_OFF
			   : mode == 1 ? CONFIG_NAME_CHECK_AUDIT
				       : CONFIG_NAME_CHECK_ENFORCE;
	p->c->selftest = choice_of(p, "selftest") != 0;
}

/* The name check runs in the output scope only: the forward chain
 * queues no flow. A check asked for there is refused, not left silently
 * undone; unasked, it is off, so that validate shows what runs. */
static int check_forward_name_check(struct pctx *p)
{
	if (p->c->scope != CONFIG_SCOPE_FORWARD)
		return 0;
	if (p->c->name_check != CONFIG_NAME_CHECK_OFF &&
	    given_of(p, "name_check.mode"))
		return configkeys_fail(
		    p, "name_check.mode",
		    "\"%s\" runs in the output scope only: with \"scope\": "
		    "\"forward\" the fence checks addresses only, so a "
		    "container that reaches an answered address may name "
		    "any server of that front end. Set \"off\" to say so, "
		    "or fence the namespace itself with \"scope\": "
		    "\"output\"",
		    config_name_check_name(p->c->name_check));
	p->c->name_check = CONFIG_NAME_CHECK_OFF;
	return 0;
}

void config_client_set_name(const char *set, char *buf, size_t cap)
{
	snprintf(buf, cap, "%.24s-client", set);
}

/* "bind": the forward scope's; with "client", one client set entry per
 * port, so the ports are few, and the two sets' names differ. */
static int check_bind(struct pctx *p)
{
	uint32_t n = 0;

	if (p->c->scope != CONFIG_SCOPE_FORWARD) {
		if (given_of(p, "bind"))
			return configkeys_fail(
			    p, "bind", "only used with \"scope\": \"forward\"");
		return 0;
	}
	if (p->c->bind_interfaces)
		return 0;
	for (size_t i = 0; i < p->c->n_ports; i++)
		n += (uint32_t)(p->c->ports[i].last - p->c->ports[i].first) + 1;
	if (n > SETS_CLIENT_PORTS_MAX)
		return configkeys_fail(
		    p, "ports",
		    "%u ports: with \"bind\": \"client\" the fence keeps one "
		    "set entry per client, port and answered address, so at "
		    "most %d ports in all; list fewer, or set \"bind\": "
		    "\"interfaces\" (every container reaches what any one "
		    "was answered)",
		    n, SETS_CLIENT_PORTS_MAX);
	config_client_set_name(p->c->set4, p->c->client4,
			       sizeof(p->c->client4));
	config_client_set_name(p->c->set6, p->c->client6,
			       sizeof(p->c->client6));
	if (strcmp(p->c->client4, p->c->client6) == 0)
		return configkeys_fail(
		    p, "sets.ipv6",
		    "its first 24 bytes are sets.ipv4's, so both client sets "
		    "would be \"%s\"; make them differ there",
		    p->c->client4);
	return 0;
}

static int finish(struct pctx *p)
{
	const char *env_mode = p->env != NULL ? p->env->mode : NULL;
	uint32_t mode = choice_of(p, "mode");
	char val[72];
	int rc;

	if (p->env != NULL && p->env->extra_hosts != NULL &&
	    (rc = configkeys_extra_hosts(p, p->env->extra_hosts)) != 0)
		return rc;
	if ((rc = configkeys_dedupe(p->c->allow, &p->c->n_allow)) != 0)
		return rc;
	if ((rc = check_wildcards(p)) != 0)
		return rc;
	if (env_mode != NULL && *env_mode != '\0') {
		for (mode = 0; mode_names[mode] != NULL; mode++) {
			if (strcmp(env_mode, mode_names[mode]) == 0)
				break;
		}
		configkeys_show(env_mode, val, sizeof(val));
		if (mode_names[mode] == NULL)
			return configkeys_fail(
			    p, "DNSFENCE_MODE",
			    "unknown mode \"%s\" (expected enforce, "
			    "audit or off)",
			    val);
	}
	p->c->mode = mode == 2	 ? CONFIG_MODE_OFF
		     : mode == 1 ? CONFIG_MODE_AUDIT
				 : CONFIG_MODE_ENFORCE;
	set_choices(p);
	if ((rc = subjects_check_local_upstreams(p)) != 0)
		return rc;
	if (p->c->ttl_min > p->c->ttl_max)
		return configkeys_fail(p, "ttl.min",
				       "%u is greater than ttl.max (%u)",
				       p->c->ttl_min, p->c->ttl_max);
	if (strcmp(p->c->set4, p->c->set6) == 0)
		return configkeys_fail(p, "sets.ipv6",
				       "same name as sets.ipv4");
	p->c->subject_lo_listener = choice_of(p, "subjects.loopback") == 1;
	if ((rc = configkeys_check_scope(p)) != 0)
		return rc;
	if ((rc = check_forward_name_check(p)) != 0)
		return rc;
	if ((rc = check_bind(p)) != 0)
		return rc;
	return subjects_check(p, given_of(p, "subjects.loopback"));
}

static void err_at(const char *text, size_t off, const char *what, char *err,
		   size_t errlen)
{
	size_t line = 1, col = 1;

	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	snprintf(err, errlen, "line %zu, column %zu: %s", line, col, what);
}

/* What people write in JSON that JSON does not have, when it is at the
 * position cJSON stopped at (off): a comment, or a comma before a closing
 * bracket. */
static const char *syntax_hint(const char *text, size_t off)
{
	size_t i = off, back = off;

	while (back > 0 && strchr(" \t\r\n", text[back - 1]) != NULL)
		back--;
	for (size_t k = off >= 2 ? off - 2 : 0; k <= off && text[k] != '\0';
	     k++) {
		if (text[k] == '#' || (text[k] == '/' && (text[k + 1] == '/' ||
							  text[k + 1] == '*')))
			return "parse error: JSON has no comments (// or #); "
			       "remove the comment";
	}
	/* cJSON stops at the bracket after the comma, or just past it. */
	i += strspn(text + i, " \t\r\n");
	if (text[i] != '}' && text[i] != ']' && back > 0 &&
	    (text[back - 1] == '}' || text[back - 1] == ']')) {
		i = back - 1;
		for (back = i; back > 0 && strchr(" \t\r\n", text[back - 1]);)
			back--;
	}
	if ((text[i] == '}' || text[i] == ']') && back > 0 &&
	    text[back - 1] == ',')
		return "parse error: JSON allows no trailing comma; remove the "
		       "',' before this bracket";
	return "parse error";
}

/* An escaped backslash before "u0000" is not an escape. */
static int check_nul_escape(const char *text, size_t len, char *err,
			    size_t errlen)
{
	for (size_t i = 0; i + 6 <= len; i++) {
		if (text[i] != '\\')
			continue;
		if (strncmp(text + i + 1, "u0000", 5) == 0) {
			err_at(text, i, "parse error (\\u0000 is not allowed)",
			       err, errlen);
			return -EINVAL;
		}
		i++; /* skip the escaped character */
	}
	return 0;
}

/* text (not NUL-terminated) to a cJSON tree in *root, with *buf its
 * NUL-terminated copy; errors name the line and column. */
static int parse_json(const char *text, size_t len, char **buf, cJSON **root,
		      char *err, size_t errlen)
{
	const char *end = NULL;
	int rc;

	if ((*buf = malloc(len + 1)) == NULL)
		return -ENOMEM;
	memcpy(*buf, text, len);
	(*buf)[len] = '\0';
	if ((rc = check_nul_escape(*buf, len, err, errlen)) != 0)
		return rc;
	*root = cJSON_ParseWithLengthOpts(*buf, len, &end, false);
	if (*root != NULL && end != NULL) {
		end += strspn(end, " \t\r\n");
		if (end < *buf + len) {
			err_at(*buf, (size_t)(end - *buf),
			       "parse error (data after the JSON value)", err,
			       errlen);
			return -EINVAL;
		}
	}
	if (*root == NULL) {
		if (end == NULL || end < *buf || end > *buf + len)
			end = *buf + len;
		err_at(*buf, (size_t)(end - *buf),
		       syntax_hint(*buf, (size_t)(end - *buf)), err, errlen);
		return -EINVAL;
	}
	return 0;
}

/* Match the members to rows, run every row's parser in table order, then
 * the checks that span keys. */
static int apply_specs(struct pctx *p, const cJSON *root)
{
	int rc;

	if (!cJSON_IsObject(root))
		return configkeys_fail(p, "top level",
				       "expected a JSON object");
	if ((rc = collect(p, root, "")) != 0)
		return rc;
	for (size_t i = 0; i < N_SPECS; i++) {
		if (specs[i].parse == NULL)
			continue;
		if ((rc = specs[i].parse(p, &specs[i], p->given[i])) != 0)
			return rc;
	}
	return finish(p);
}

int config_parse(const char *text, size_t len, const struct config_env *env,
		 struct config **out, char *err, size_t errlen)
{
	const cJSON *given[N_SPECS] = {0};
	uint32_t choice[N_SPECS] = {0};
	struct pctx p = {env, NULL, err, errlen, specs, given, choice, NULL};
	char *buf = NULL;
	cJSON *root = NULL;
	int rc;

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if ((p.c = calloc(1, sizeof(*p.c))) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = parse_json(text, len, &buf, &root, err, errlen)) != 0)
		goto out;
	if ((rc = apply_specs(&p, root)) != 0)
		goto out;
	*out = p.c;
	p.c = NULL;
out:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	cJSON_Delete(root);
	config_free(p.c);
	free(buf);
	return rc;
}

int config_read_file(const char *path, char **text, size_t *len, char *err,
		     size_t errlen)
{
	FILE *f = fopen(path, "re"), *mem = NULL;
	char chunk[4096];
	size_t n;
	int rc = 0;

	*text = NULL;
	*len = 0;
	if (f == NULL) {
		rc = errno == ENOENT ? -ENOENT : -EIO;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	if ((mem = open_memstream(text, len)) == NULL) {
		fclose(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, mem);
	if (ferror(f)) {
		rc = -EIO;
		snprintf(err, errlen, "%s: read error", path);
	}
	fclose(f);
	if (fclose(mem) != 0 && rc == 0) {
		rc = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
	}
	if (rc != 0) {
		free(*text);
		*text = NULL;
	}
	return rc;
}

const char *config_path(const char *path)
{
	if (path == NULL || *path == '\0')
		path = getenv("DNSFENCE_CONFIG");
	return path == NULL || *path == '\0' ? CONFIG_DEFAULT_PATH : path;
}

const char *config_default_path(void)
{
	return CONFIG_DEFAULT_PATH;
}

int config_load(const char *path, struct config **out, char *err, size_t errlen)
{
	const char *state = getenv("DNSFENCE_STATE_DIR");
	char saved[PATH_MAX];
	char state_dir[PATH_MAX];
	struct config_env env = {getenv("DNSFENCE_MODE"),
				 getenv("DNSFENCE_EXTRA_HOSTS"), NULL, NULL,
				 state_dir};
	char *text = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	instance_default_dir(state_dir, sizeof(state_dir));
	if (state != NULL && *state != '\0' &&
	    snprintf(saved, sizeof(saved), "%s/resolv.conf.orig", state) <
		(int)sizeof(saved))
		env.saved_resolv_conf = saved;
	path = config_path(path);
	if ((rc = config_read_file(path, &text, &len, err, errlen)) != 0)
		goto out;
	rc = config_parse(text, len, &env, out, err, errlen);
	if (rc != 0) { /* name the file, or the environment, too */
		char tmp[512];

		snprintf(tmp, sizeof(tmp), "%s", err);
		if (strncmp(tmp, "DNSFENCE_", 9) == 0)
			snprintf(err, errlen, "the environment (not %s): %s",
				 path, tmp);
		else
			snprintf(err, errlen, "%s: %s", path, tmp);
	}
out:
	free(text);
	return rc;
}

void config_free(struct config *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n_allow; i++)
		free(c->allow[i]);
	for (size_t i = 0; i < c->n_ecosystems; i++)
		free(c->ecosystems[i]);
	free(c->allow);
	free(c->ecosystems);
	free(c->listen);
	free(c->upstreams);
	free(c->retired);
	free(c->held);
	free(c->qtypes);
	free(c->ports);
	free(c->tls_ports);
	free(c->http_ports);
	free(c->quic_ports);
	free(c->allow_cidrs);
	free(c->source_cidrs);
	free(c->set4);
	free(c->set6);
	free(c->user);
	free(c->state_dir);
	for (size_t i = 0; i < c->n_interfaces; i++)
		free(c->interfaces[i]);
	free(c->interfaces);
	for (size_t i = 0; i < c->n_host_allow; i++)
		free(c->host_allow[i]);
	free(c->host_allow);
	free(c->control_socket);
	free(c->subject_uids);
	free(c->subject_gids);
	for (size_t i = 0; i < c->n_subject_cgroups; i++)
		free(c->subject_cgroups[i]);
	free(c->subject_cgroups);
	free(c->subject_lo_ports);
	free(c);
}

bool config_port_allowed(const struct config *cfg, uint8_t proto, uint16_t port)
{
	for (size_t i = 0; i < cfg->n_ports; i++) {
		const struct config_port *p = &cfg->ports[i];

		if (p->proto == proto && port >= p->first && port <= p->last)
			return true;
	}
	return false;
}

const char *config_mode_name(enum config_mode m)
{
	return (unsigned)m < 3 ? mode_names[m] : "unknown";
}

const char *config_deny_name(enum config_deny d)
{
	return (unsigned)d < 2 ? deny_names[d] : "unknown";
}

const char *config_log_format_name(enum log_format f)
{
	return (unsigned)f <= LOG_FORMAT_JOURNAL ? format_names[f] : "text";
}

const char *config_scope_name(enum config_scope s)
{
	return (unsigned)s < 2 ? scope_names[s] : "unknown";
}

void config_port_format(const struct config_port *pt, char *buf, size_t cap)
{
	const char *proto = pt->proto == IPPROTO_UDP ? "udp" : "tcp";

	if (pt->first == pt->last)
		snprintf(buf, cap, "%s/%u", proto, pt->first);
	else
		snprintf(buf, cap, "%s/%u-%u", proto, pt->first, pt->last);
}

bool config_port_covered(const struct config_port *list, size_t n,
			 const struct config_port *pt)
{
	for (size_t i = 0; i < n; i++) {
		if (list[i].proto == pt->proto && list[i].first <= pt->first &&
		    pt->last <= list[i].last)
			return true;
	}
	return false;
}

const char *config_name_check_name(enum config_name_check m)
{
	return (unsigned)m < 3 ? mode_names[m] : "unknown";
}

static void print_cell_type(FILE *f, const struct key_spec *k)
{
	if (k->type != NULL)
		fprintf(f, "%s", k->type);
	else if (k->kind == K_INT)
		fprintf(f, "integer, %u..%u", k->lo, k->hi);
	else
		for (size_t i = 0; k->choices[i] != NULL; i++)
			fprintf(f, "%s`\"%s\"`", i ? " / " : "", k->choices[i]);
}

static void print_cell_default(FILE *f, const struct key_spec *k)
{
	if (k->def_doc != NULL)
		fprintf(f, "%s", k->def_doc);
	else if (k->kind == K_INT)
		fprintf(f, "`%u`", k->def);
	else if (k->kind == K_CHOICE)
		fprintf(f, "`\"%s\"`", k->choices[k->def]);
	else if (k->kind == K_STRING)
		fprintf(f, "`\"%s\"`", k->defs[0]);
	else if (k->kind == K_LIST) {
		fprintf(f, "`[");
		for (size_t i = 0; k->defs != NULL && k->defs[i] != NULL; i++)
			fprintf(f, "%s\"%s\"", i ? ", " : "", k->defs[i]);
		fprintf(f, "]`");
	}
}

void config_print_reference(FILE *f)
{
	fprintf(f,
		"# dnsfence configuration reference\n\n"
		"<!-- Generated from the key table in src/config/config.c "
		"(config_print_reference). Edit the table, not this file. -->"
		"\n\n"
		"The configuration is one JSON object, read from `-c FILE`, "
		"else `$DNSFENCE_CONFIG`, else "
		"`SYSCONFDIR/dnsfence/dnsfence.json`, SYSCONFDIR being the "
		"one the build was configured with: `/etc` for the prefix "
		"`/usr` (the Debian package, the container image), "
		"`/usr/local/etc` for a default `cmake --install`; "
		"`dnsfence --help` names the file it reads. "
		"Every key is optional: the defaults give a working deny-all "
		"fence. Unknown keys, keys given twice, and values of the "
		"wrong type are errors (exit 2), and the message names the "
		"key path and the reason, for example "
		"`ttl.min: expected an integer` or "
		"`ports[0]: \"tcp/99999\": ports are 1..65535`. A key path "
		"`ttl.min` is the key `min` inside the object `ttl`.\n\n"
		"Integers are JSON numbers without a fraction. `dnsfence "
		"validate` prints the normalized configuration, with every "
		"default filled in.\n\n"
		"## Keys\n\n"
		"| key | type | default | meaning |\n"
		"|---|---|---|---|\n");
	for (size_t i = 0; i < N_SPECS; i++) {
		fprintf(f, "| `%s` | ", specs[i].path);
		print_cell_type(f, &specs[i]);
		fprintf(f, " | ");
		if (specs[i].kind != K_GROUP)
			print_cell_default(f, &specs[i]);
		fprintf(f, " | %s |\n", specs[i].meaning);
	}
	fprintf(f, "\n## Ecosystem presets\n\n"
		   "| preset | names |\n"
		   "|---|---|\n");
	for (const char *const *p = policy_preset_names(); *p != NULL; p++) {
		const char *const *h = policy_preset_hosts(*p);

		fprintf(f, "| `%s` |", *p);
		for (size_t k = 0; h != NULL && h[k] != NULL; k++)
			fprintf(f, "%s`%s`", k ? ", " : " ", h[k]);
		fprintf(f, " |\n");
	}
	fprintf(f, "\n## Environment\n\n"
		   "| variable | meaning |\n"
		   "|---|---|\n");
	for (size_t i = 0; i < sizeof(env_specs) / sizeof(env_specs[0]); i++)
		fprintf(f, "| `%s` | %s |\n", env_specs[i].name,
			env_specs[i].meaning);
}
