//! Object reads that keep delta bases, as git does.
//!
//! A tree in a pack is usually a delta on another tree, itself a delta,
//! down a chain to a full object. git keeps every base it inflates on the
//! way (`core.deltaBaseCacheLimit`), so the many trees whose chains share
//! bases inflate each base once. gix's pack cache keeps only the objects
//! asked for, so each new tree inflates its whole chain again: on a
//! repository packed by a forge, most of a history walk's time. Before a
//! tree is read for the first time, its chain is walked by the entries'
//! headers alone and each base not read yet is asked for, deepest first:
//! each is then one delta on a cached base, and stays cached for the next.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use gix::ObjectId;
use gix::odb::pack::Find as _;
use gix::odb::pack::data::entry::{Header, Location};

/// Deepest chain followed (git's own default `--depth` is 50).
const MAX_DEPTH: usize = 4096;
/// Bytes of a pack entry that hold its header: type, size and base offset.
const HEADER_BYTES: usize = 32;

pub struct Bases<'a> {
    objects: &'a gix::OdbHandle,
    hash: gix::hash::Kind,
    /// Objects read (or asked for) already, so in the caches.
    seen: RefCell<HashSet<ObjectId>>,
    /// Each pack's objects by offset, read the first time a base is needed.
    by_offset: RefCell<HashMap<u32, Vec<(u64, ObjectId)>>>,
}

impl<'a> Bases<'a> {
    /// `repo` must have a pack cache; its packs are kept mapped meanwhile.
    pub fn new(repo: &'a gix::Repository) -> Bases<'a> {
        Bases {
            objects: &repo.objects,
            hash: repo.object_hash(),
            seen: RefCell::default(),
            by_offset: RefCell::default(),
        }
    }

    /// The object at `offset` in pack `pack`.
    fn id_at(&self, pack: u32, offset: u64) -> Option<ObjectId> {
        let mut by_offset = self.by_offset.borrow_mut();
        let list = match by_offset.entry(pack) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let mut list = self.objects.pack_offsets_and_oid(pack).ok()??;
                list.sort_unstable_by_key(|(o, _)| *o);
                e.insert(list)
            }
        };
        let at = list.binary_search_by_key(&offset, |(o, _)| *o).ok()?;
        Some(list[at].1)
    }

    /// Reads the bases of `id`'s delta chain not read yet, deepest first.
    /// Anything unexpected stops it: this only makes reads faster.
    fn prime(&self, id: &gix::oid) {
        let mut buf = Vec::new();
        let Ok(Some(location)) = self.objects.location_by_oid(id, &mut buf) else {
            return;
        };
        let pack = location.pack_id;
        let mut offset = location.pack_offset;
        let mut missing = Vec::new();
        for _ in 0..MAX_DEPTH {
            let header = Location {
                pack_id: pack,
                pack_offset: offset,
                entry_size: HEADER_BYTES,
            };
            let Some(entry) = self.objects.entry_by_location(&header) else {
                break;
            };
            let Ok(entry) = gix::odb::pack::data::Entry::from_bytes(&entry.data, offset, self.hash)
            else {
                break;
            };
            let Header::OfsDelta { base_distance } = entry.header else {
                break;
            };
            let Some(base) = entry.checked_base_pack_offset(base_distance) else {
                break;
            };
            let Some(base_id) = self.id_at(pack, base) else {
                break;
            };
            if !self.seen.borrow_mut().insert(base_id) {
                break;
            }
            missing.push(base_id);
            offset = base;
        }
        for base in missing.iter().rev() {
            if gix::objs::Find::try_find(self.objects, base, &mut buf).is_err() {
                return;
            }
        }
    }
}

impl gix::objs::Find for Bases<'_> {
    fn try_find<'b>(
        &self,
        id: &gix::oid,
        buffer: &'b mut Vec<u8>,
    ) -> gix::Result<Option<gix::objs::Data<'b>>> {
        let first = self.seen.borrow_mut().insert(id.to_owned());
        if first {
            self.prime(id);
        }
        gix::objs::Find::try_find(self.objects, id, buffer)
    }
}
