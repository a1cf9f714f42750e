# Runs at install time (`cmake --install BUILD --prefix PREFIX`, `make deb`), so the paths
# follow the prefix given then, not the one the tree was configured with: one Release tree
# serves both a package (/usr) and a hand install (/usr/local).
#
#   prefix /usr      unit in /lib/systemd/system (Debian 12's place for packaged units),
#                    configuration in /etc/nfsrdmad
#   other prefixes   unit in PREFIX/lib/systemd/system, configuration in PREFIX/etc/nfsrdmad
#
# The unit (systemd/nfsrdmad.service.in) is written with the daemon's and the file's paths.
# The configuration is the one that exports nothing (packaging/nfsrdmad.yaml); an existing
# file is never overwritten (a package ships it as a conffile, which dpkg protects itself).
# file(INSTALL) adds $DESTDIR to these absolute paths.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(_etc /etc)
  set(_unitdir /lib/systemd/system)
else()
  set(_etc "${CMAKE_INSTALL_PREFIX}/etc")
  set(_unitdir "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
endif()

set(NFSRDMAD_SBIN "${CMAKE_INSTALL_PREFIX}/sbin/nfsrdmad")
set(NFSRDMAD_CONFIG "${_etc}/nfsrdmad/nfsrdmad.yaml")
configure_file("${NFSRDMAD_SOURCE_DIR}/systemd/nfsrdmad.service.in"
               "${NFSRDMAD_BINARY_DIR}/packaging/nfsrdmad.service" @ONLY)
file(INSTALL "${NFSRDMAD_BINARY_DIR}/packaging/nfsrdmad.service" DESTINATION "${_unitdir}"
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

if(EXISTS "$ENV{DESTDIR}${NFSRDMAD_CONFIG}")
  message(STATUS "Kept: $ENV{DESTDIR}${NFSRDMAD_CONFIG}")
else()
  file(INSTALL "${NFSRDMAD_SOURCE_DIR}/packaging/nfsrdmad.yaml" DESTINATION "${_etc}/nfsrdmad"
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
endif()
