#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# suggest proposes the ecosystem preset whose hosts the denied names are
# (github.com, api.github.com, codeload.github.com: "github"; pypi.org,
# files.pythonhosted.org: "pypi") instead of listing them one by one,
# and --explain names the names each preset covers; a preset never
# covers a name it does not hold: gist.github.com (not a github host)
# and lone.example.test (in no preset) are still proposed alone, and one
# host of a preset (registry.npmjs.org) does not bring in the preset.
# prune covers presets: a preset none of whose hosts was used for the
# period is dropped from "ecosystems" like an unused allow entry; a used
# one (a question for api.github.com) is kept, and so is every preset
# when the period is longer than the time they went unused.
source "$(dirname "$0")/lib.sh"

df_setup
df_start_dnsfence allow='["www.allowed.test"]'

for name in github.com api.github.com codeload.github.com pypi.org \
	files.pythonhosted.org gist.github.com lone.example.test registry.npmjs.org; do
	df_dig "$name" A
	expect_rcode NXDOMAIN
done

df_dnsfence suggest --explain
[ "$DF_CMD_RC" -eq 0 ] || fail "suggest --explain exited $DF_CMD_RC: $DF_CMD_ERR"
"$DF_PY" - "$DF_CMD_OUT" <<'PY' || fail "suggest --explain printed: $DF_CMD_OUT"
import json, sys
got = json.loads(sys.argv[1])
assert got.get("ecosystems") == ["pypi", "github"], got.get("ecosystems")  # the table's order
# The control: names outside every preset, and a preset's lone host, stay.
assert got["allow"] == ["www.allowed.test", "gist.github.com", "lone.example.test",
                        "registry.npmjs.org"], got["allow"]
ex = {e.get("ecosystem", e.get("entry")): e for e in got["explain"]}
assert sorted(ex["github"]["names"]) == ["api.github.com", "codeload.github.com", "github.com"], ex
assert sorted(ex["pypi"]["names"]) == ["files.pythonhosted.org", "pypi.org"], ex
assert ex["github"]["count"] == 3 and ex["pypi"]["count"] == 2, ex
assert "lone.example.test" in ex and "gist.github.com" in ex, ex
PY
ok "suggest --explain: $(tr -d '\n' <<<"$DF_CMD_OUT" | tr -s ' ')"
printf '%s\n' "$DF_CMD_OUT" >"$DF_TMP/suggested.json"
df_dnsfence diff "$DF_TMP/suggested.json"
[ "$DF_CMD_RC" -eq 1 ] || fail "diff of the suggestion exited $DF_CMD_RC: $DF_CMD_ERR"
grep -qx '+ ecosystem github' <<<"$DF_CMD_OUT" && grep -qx '+ ecosystem pypi' <<<"$DF_CMD_OUT" &&
	grep -qx '+ lone.example.test' <<<"$DF_CMD_OUT" || fail "diff of the suggestion: $DF_CMD_OUT"
ok "diff of the suggestion names the presets it adds"

# prune: run with the two presets, then age what the daemon recorded by
# two hours (rewritten in place: its owner and mode stay), so the test
# waits for nothing; then one question for a github host.
df_stop_dnsfence
allow='["www.allowed.test"]'
df_start_dnsfence allow="$allow" ecosystems='["github", "pypi"]'
df_stop_dnsfence
"$DF_PY" - "$DF_TMP/state/usage.json" <<'PY' || fail "cannot age usage.json: $(cat "$DF_TMP/state/usage.json")"
import json, sys
with open(sys.argv[1], "r+") as f:
    u = json.load(f)
    hosts = {e["entry"] for e in u["entries"]}
    assert {"pypi.org", "files.pythonhosted.org", "api.github.com"} <= hosts, hosts
    for e in u["entries"]:
        e["first_seen"] -= 7200
        e["last_used"] = 0
    f.seek(0)
    f.truncate()
    json.dump(u, f)
PY
df_start_dnsfence allow="$allow" ecosystems='["github", "pypi"]'
df_dig api.github.com A
df_dig www.allowed.test A
expect_rcode NOERROR
df_stop_dnsfence

df_dnsfence prune --unused-for 1h
[ "$DF_CMD_RC" -eq 0 ] || fail "prune exited $DF_CMD_RC: $DF_CMD_ERR"
"$DF_PY" - "$DF_CMD_OUT" <<'PY' || fail "prune --unused-for 1h printed: $DF_CMD_OUT"
import json, sys
got = json.loads(sys.argv[1])
assert got["allow"] == ["www.allowed.test"], got
assert got["ecosystems"] == ["github"], got   # github was used: kept
PY
grep -q '^pruned ecosystem pypi: none of its 3 hosts used for [0-9]* s' <<<"$DF_CMD_ERR" ||
	fail "prune did not name the preset it dropped: $DF_CMD_ERR"
! grep -q 'github' <<<"$DF_CMD_ERR" || fail "prune dropped the used preset: $DF_CMD_ERR"
printf '%s\n' "$DF_CMD_OUT" >"$DF_TMP/pruned.json"
ok "prune --unused-for 1h: $(tr -d ' \n' <<<"$DF_CMD_OUT"); $(grep '^pruned' <<<"$DF_CMD_ERR")"

df_dnsfence prune --unused-for 3h
"$DF_PY" -c 'import json, sys; assert json.loads(sys.argv[1])["ecosystems"] == ["github", "pypi"]' "$DF_CMD_OUT" ||
	fail "prune --unused-for 3h dropped a preset: $DF_CMD_OUT $DF_CMD_ERR"
df_dnsfence diff "$DF_TMP/pruned.json"
[ "$DF_CMD_RC" -eq 1 ] && [ "$DF_CMD_OUT" = "- ecosystem pypi" ] || fail "diff of prune's output: exit $DF_CMD_RC, '$DF_CMD_OUT'"
ok "prune --unused-for 3h keeps both presets; diff of the pruned list: - ecosystem pypi"
