#!/bin/sh
# tune-nightly.sh: the crontab recipe of docs/nightly.md. cron runs it in a clone of the project whose
# origin is the shared repository; page-oncall and alert-ops stand for your paging and alerting hooks.
# It never edits the clone's files: tune nightly --branch commits the night's change on its tune/ branch, and
# this script keeps its own output in the git directory.
cd "$(dirname "$0")" || exit 1
keep=$(git rev-parse --absolute-git-dir)/tune-nightly && mkdir -p "$keep" || exit 1
out=$keep/out.json err=$keep/err.txt
git fetch --quiet --prune origin '+refs/heads/main:refs/remotes/origin/main' '+refs/heads/tune/*:refs/heads/tune/*' &&
  git checkout --quiet --detach origin/main || { alert-ops "tune nightly: git fetch or checkout of origin/main failed" "$PWD"; exit 1; }
# the reviewers' noes: the active version's tune/ branches whose pull request was closed unmerged, not by
# this script (its closes are its own comments "superseded by …") and not from a fork. tune proposes none
# of them again and names them in "declined"; reopen one to ask again.
version=$(tune weights show --jq .version) || { alert-ops "tune nightly: tune weights show failed" "$PWD"; exit 1; }
# the branches fetched, and those of closed requests whose branch was deleted on close (their no stands)
heads=$(gh pr list --state closed --limit 1000 --json headRefName --jq '.[].headRefName') ||
  { alert-ops "tune nightly: gh pr list failed" "$PWD"; exit 1; }
declined=
for b in $({ git for-each-ref --format='%(refname:lstrip=2)' "refs/heads/tune/$version-*"; printf '%s\n' "$heads" | grep "^tune/$version-"; } | sort -u); do
  n=$(gh pr list --head "$b" --state all --json state,isCrossRepository,comments \
    --jq '[.[] | select(.state == "CLOSED" and (.isCrossRepository | not) and all(.comments[]; .viewerDidAuthor and (.body | startswith("superseded by ")) | not))] | length') ||
    { alert-ops "tune nightly: gh pr list failed" "$PWD"; exit 1; }
  [ "$n" = 0 ] || declined=${declined:+$declined,}$b
done
tune nightly --branch --declined "$declined" --json >"$out" 2>"$err"
rc=$?
if [ "$rc" -eq 3 ]; then
  # an escalation that kept steps still leaves them for review (its branch, below), then exits 3
  page-oncall "tune nightly escalated: a human decides (tune help escalation)" "$(jq -r .state_dump "$out")"
elif [ "$rc" -ne 0 ]; then
  alert-ops "tune nightly failed with exit $rc" "$err"
  exit "$rc"
fi
jq -r '(.declined // [])[] | "tune nightly: a reviewer closed the pull request of \(.); not proposed again (reopen it to ask again)"' "$out"
# after a merge, tune's requests made on a version no longer active can no longer merge: closed
for old in $(jq -r '(.stale // [])[]' "$out"); do
  gh pr close "$old" --delete-branch --comment "superseded by the merge of another change" || true
done
review=$(jq -r .review "$out")
[ -n "$review" ] || exit "$rc"
branch=$(jq -r .branch "$out")
if [ "$(jq -r .branch_updated "$out")" = true ]; then
  git push --quiet --force origin "$branch" || { alert-ops "tune nightly: git push $branch failed" "$PWD"; exit 1; }
fi
open=$(gh pr list --head "$branch" --state open --json isCrossRepository --jq '[.[] | select(.isCrossRepository | not)] | length') ||
  { alert-ops "tune nightly: gh pr list failed" "$PWD"; exit 1; }
if [ "$open" = 0 ]; then
  gh pr create --head "$branch" --title "$(jq -r .title "$out")" --body-file "$(jq -r .body_file "$out")" || exit 1
fi
for old in $(jq -r '.supersedes[]' "$out"); do
  gh pr close "$old" --delete-branch --comment "superseded by $branch" || true
done
if [ "$review" = rollback ]; then
  alert-ops "tune: the watch proposes a rollback, review $branch" "$(jq -r .title "$out")"
fi
exit "$rc"
