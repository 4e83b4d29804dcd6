# Installs the Debian packages the cluster runs on, when any is missing.

DEBIAN_PACKAGES=(postgresql-15 zookeeper clickhouse-server clickhouse-client nats-server)

package_installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

missing_packages() {
  local p
  for p in "${DEBIAN_PACKAGES[@]}"; do package_installed "$p" || echo "$p"; done
}

install_packages() {
  local missing started
  command -v dpkg-query >/dev/null || fail "this needs Debian (12, bookworm) or a derivative with its packages"
  mapfile -t missing < <(missing_packages)
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || fail "missing Debian packages: ${missing[*]}; install them as root: apt-get install -y ${missing[*]}"
  say "Installing ${missing[*]} from Debian…"
  started=$(now)
  export DEBIAN_FRONTEND=noninteractive
  local apt_opts=(-y -q -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
  # Refresh the package lists only when one of the packages is unknown to them (a fresh image).
  local p
  for p in "${missing[@]}"; do
    if ! apt-cache show "$p" >/dev/null 2>&1; then
      apt-get -q -o DPkg::Lock::Timeout=300 update >/dev/null || fail "apt-get update failed"
      break
    fi
  done
  apt-get install "${apt_opts[@]}" --no-install-recommends "${missing[@]}" > "$CLUSTER_DIR/apt-install.log" 2>&1 || {
    tail -n 25 "$CLUSTER_DIR/apt-install.log" >&2
    fail "apt-get install ${missing[*]} failed (log: $CLUSTER_DIR/apt-install.log)"
  }
  say "Installed in $(seconds_since "$started") s"
}
