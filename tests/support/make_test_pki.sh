#!/usr/bin/env bash
# The test suite's credentials, made once per test run (CTest fixture test_pki) with the
# shipped deploy/make-pki.sh: one CA with a site and people of every role, a person without
# a role, one revoked and one expired certificate, and a second, unrelated CA.
set -euo pipefail
dir=$1
make_pki=$(dirname "$0")/../../deploy/make-pki.sh
rm -rf "$dir"
bash "$make_pki" init "$dir" --site remote --person operator=operator --person bob=operator \
  --person observer=observer --person admin=admin --person nobody --person revoked=operator \
  >/dev/null
bash "$make_pki" person "$dir" expired operator --expired >/dev/null
bash "$make_pki" revoke "$dir" revoked >/dev/null
bash "$make_pki" init "$dir/other" --site remote --person stranger=admin >/dev/null
echo "test PKI in $dir"
