#!/usr/bin/env bash
# Credentials for tether's mutual TLS, with openssl: a CA, certificates for remote sites and
# for people (each with a role), the roles file and a certificate revocation list.
#
#   deploy/make-pki.sh init DIR [--site NAME]... [--person NAME=ROLE]... [--days N]
#       A new CA in DIR (kept if DIR already has one), then every site and person given
#       (default: site "remote"; people operator=operator, observer=observer, admin=admin).
#   deploy/make-pki.sh site DIR NAME [--san DNS:host|IP:addr]... [--days N]
#   deploy/make-pki.sh person DIR NAME [ROLE] [--days N] [--expired]
#       ROLE (observer, operator, admin) is written to DIR/roles.txt; without one the person
#       may only stop the arm. --expired issues a certificate that is already out of date.
#   deploy/make-pki.sh revoke DIR NAME
#       Revokes the person's (or site's) certificate and rewrites DIR/crl.pem; send the
#       remote site SIGHUP to apply it.
#
# What DIR holds afterwards:
#   ca.pem, crl.pem, roles.txt          for every remote site (--ca, --crl, --roles)
#   sites/NAME.pem, sites/NAME.key      a site's certificate (CN and DNS NAME, localhost,
#                                       127.0.0.1 and ::1) and key; sites/NAME.conf its
#                                       tether-remote --config
#   people/NAME.pem, people/NAME.key    a person's certificate (CN = NAME, the identity the
#                                       sites see) and key; people/NAME.conf their
#                                       tether / tether-ground --config
#   ca/                                 the CA's key and database: keep it off the sites
# Keys are EC P-256, readable by their owner only.
set -euo pipefail
umask 077  # keys (and the CA's database) readable by their owner only, from the start

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
die() { echo "make-pki.sh: $*" >&2; exit 1; }
case ${1:-} in
  -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;  # for people and help2man
esac
[ $# -ge 2 ] || usage
command -v openssl >/dev/null || die "openssl is not installed (apt-get install openssl)"

command=$1 dir=$2
shift 2
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
ca=$dir/ca
days=365

valid_name() {
  [[ "$1" =~ ^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$ ]] ||
    die "name '$1': expected 1-64 of A-Z a-z 0-9 _ . @ - (starting with a letter or digit)"
}

ca_config() {
  cat >"$ca/openssl.cnf" <<CNF
[ ca ]
default_ca = tether_ca
[ tether_ca ]
dir = $ca
database = \$dir/index.txt
new_certs_dir = \$dir/issued
certificate = \$dir/ca.pem
private_key = \$dir/ca.key
serial = \$dir/serial
crlnumber = \$dir/crlnumber
default_md = sha256
default_crl_days = 30
policy = any_name
unique_subject = no
copy_extensions = none
[ any_name ]
commonName = supplied
[ person ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
CNF
}

make_ca() {
  if [ -f "$ca/ca.pem" ]; then ca_config; return; fi
  mkdir -p "$ca/issued"
  chmod 700 "$ca"
  : >"$ca/index.txt"
  echo 1000 >"$ca/serial"
  echo 1000 >"$ca/crlnumber"
  ca_config
  openssl ecparam -name prime256v1 -genkey -noout -out "$ca/ca.key" 2>/dev/null
  chmod 600 "$ca/ca.key"
  openssl req -x509 -new -key "$ca/ca.key" -sha256 -days 3650 -subj "/CN=tether CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$ca/ca.pem"
  cp "$ca/ca.pem" "$dir/ca.pem"
  : >>"$dir/roles.txt"
  write_crl
  echo "make-pki.sh: CA 'tether CA' in $ca"
}

write_crl() {
  openssl ca -config "$ca/openssl.cnf" -gencrl -out "$dir/crl.pem" 2>/dev/null
}

# issue KIND NAME OUT_PREFIX EXTRA_CA_ARGS...
issue() {
  local kind=$1 name=$2 out=$3
  shift 3
  openssl ecparam -name prime256v1 -genkey -noout -out "$out.key" 2>/dev/null
  chmod 600 "$out.key"
  openssl req -new -key "$out.key" -subj "/CN=$name" -out "$out.csr"
  openssl ca -batch -config "$ca/openssl.cnf" -extensions "$kind" -notext "$@" \
    -in "$out.csr" -out "$out.pem" 2>/dev/null || die "openssl ca refused to issue '$name'"
  rm -f "$out.csr"
}

make_site() {
  local name=$1
  shift
  valid_name "$name"
  local san="DNS:$name,DNS:localhost,IP:127.0.0.1,IP:::1"
  while [ $# -gt 0 ]; do
    case $1 in
      --san) san="$san,$2"; shift 2 ;;
      --days) days=$2; shift 2 ;;
      *) die "site: unknown option '$1'" ;;
    esac
  done
  mkdir -p "$dir/sites"
  # The names differ per site, so its extensions go in a file of their own.
  cat >"$dir/sites/$name.ext" <<EXT
[ site ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = $san
EXT
  issue site "$name" "$dir/sites/$name" -days "$days" -extfile "$dir/sites/$name.ext"
  rm -f "$dir/sites/$name.ext"
  cat >"$dir/sites/$name.conf" <<CONF
# tether-remote --config $dir/sites/$name.conf
ca = "$dir/ca.pem"
cert = "$dir/sites/$name.pem"
key = "$dir/sites/$name.key"
crl = "$dir/crl.pem"
roles = "$dir/roles.txt"
CONF
  echo "make-pki.sh: site '$name' ($san): $dir/sites/$name.pem"
}

set_role() {
  local name=$1 role=$2
  local roles=$dir/roles.txt
  touch "$roles"
  awk -v n="$name" '$1 != n' "$roles" >"$roles.new"
  if [ -n "$role" ]; then printf '%s %s\n' "$name" "$role" >>"$roles.new"; fi
  mv "$roles.new" "$roles"
}

make_person() {
  local name=$1 role=${2:-} expired=no
  shift $(( $# >= 2 ? 2 : 1 ))
  valid_name "$name"
  case $role in
    ''|observer|operator|admin) ;;
    --*) set -- "$role" "$@"; role='' ;;
    *) die "person '$name': role '$role': expected observer, operator or admin" ;;
  esac
  while [ $# -gt 0 ]; do
    case $1 in
      --days) days=$2; shift 2 ;;
      --expired) expired=yes; shift ;;
      *) die "person: unknown option '$1'" ;;
    esac
  done
  mkdir -p "$dir/people"
  if [ "$expired" = yes ]; then
    issue person "$name" "$dir/people/$name" -startdate 20200101000000Z -enddate 20200201000000Z
  else
    issue person "$name" "$dir/people/$name" -days "$days"
  fi
  set_role "$name" "$role"
  cat >"$dir/people/$name.conf" <<CONF
# tether --config $dir/people/$name.conf (or copy to ~/.config/tether/tether.conf)
ca = "$dir/ca.pem"
cert = "$dir/people/$name.pem"
key = "$dir/people/$name.key"
CONF
  local note=${role:-no role}
  [ "$expired" = no ] || note="$note, expired"
  echo "make-pki.sh: person '$name' ($note): $dir/people/$name.pem"
}

revoke() {
  local name=$1 cert
  valid_name "$name"
  for cert in "$dir/people/$name.pem" "$dir/sites/$name.pem"; do
    if [ -f "$cert" ]; then
      openssl ca -config "$ca/openssl.cnf" -revoke "$cert" 2>/dev/null ||
        die "openssl ca could not revoke '$cert'"
      write_crl
      echo "make-pki.sh: revoked '$name'; $dir/crl.pem rewritten (send the sites SIGHUP)"
      return
    fi
  done
  die "no certificate of '$name' in $dir/people or $dir/sites"
}

case $command in
  init)
    sites=() people=()
    while [ $# -gt 0 ]; do
      case $1 in
        --site) sites+=("$2"); shift 2 ;;
        --person) people+=("$2"); shift 2 ;;
        --days) days=$2; shift 2 ;;
        *) die "init: unknown option '$1'" ;;
      esac
    done
    [ ${#sites[@]} -gt 0 ] || sites=(remote)
    [ ${#people[@]} -gt 0 ] || people=(operator=operator observer=observer admin=admin)
    make_ca
    for s in "${sites[@]}"; do [ -f "$dir/sites/$s.pem" ] || make_site "$s"; done
    for p in "${people[@]}"; do
      name=${p%%=*} role=${p#*=}
      [ "$name" != "$p" ] || role=''
      [ -f "$dir/people/$name.pem" ] || make_person "$name" "$role"
    done
    ;;
  site|person|revoke)
    [ -f "$ca/ca.pem" ] || die "no CA in $dir: run 'init' first"
    ca_config  # names the CA's files where they are now (DIR may have been moved or copied)
    case $command in
      site) make_site "$@" ;;
      person) make_person "$@" ;;
      revoke) revoke "$@" ;;
    esac
    ;;
  *) usage ;;
esac
