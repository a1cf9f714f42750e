// vfs.h — umbrella header of nfsrdmad::vfs, the Linux filesystem back end.
//
// Typical request flow (NFSv3 procedure layer):
//   ExportRegistry::Pin pin(registry);               // the table, for this request
//   auto& table = pin.table();                       // (export_registry.h)
//   auto ref   = table->find_by_handle(fh);          // MAC + fsid, no filesystem access
//   const ClientRule* rule = match(ref->exp->spec(), peer, hostname);  // none: refuse
//   Identity id = squash(*rule, creds, flavor);
//   auto node  = ExportTable::open(*ref);            // as root: handle -> O_PATH fd
//   auto entry = lookup(*node, name, id);            // operation under id's credentials
// READ/WRITE/COMMIT go through FdCache::get(*ref, ...) instead of open().
#pragma once

#include "nfs/vfs/attrs.h"
#include "nfs/vfs/create.h"
#include "nfs/vfs/dirops.h"
#include "nfs/vfs/durability.h"
#include "nfs/vfs/export.h"
#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/handle.h"
#include "nfs/vfs/identity.h"
#include "nfs/vfs/io.h"
#include "nfs/vfs/lookup.h"
#include "nfs/vfs/names.h"
#include "nfs/vfs/node.h"
#include "nfs/vfs/policy.h"
#include "nfs/vfs/readdir.h"
#include "nfs/vfs/result.h"
#include "nfs/vfs/secret.h"
#include "nfs/vfs/siphash.h"
#include "nfs/vfs/unique_fd.h"
