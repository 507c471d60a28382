//! `--store`: databases held in memory, as much of them as replication needs and no more:
//! each document's leaf revisions (with their ancestry, for `_revisions`, and the size its
//! body had), a sequence, the `_local` documents (replication logs, kept whole: they are
//! small and a replicator reads back what it wrote). Bodies are not kept; answers that
//! carry one get a generated body of the size the revision was written with.

use std::collections::{BTreeMap, HashMap};

use tokio::sync::watch;

use crate::stateless::fnv1a;

/// How many ancestors a leaf keeps (CouchDB's default `_revs_limit`).
pub const REVS_LIMIT: usize = 1000;
/// The largest `_local` document kept, bytes.
pub const MAX_LOCAL: usize = 64 * 1024;

#[derive(Default)]
pub struct Store {
    databases: HashMap<Box<str>, Database>,
}

impl Store {
    pub fn get(&self, name: &str) -> Option<&Database> {
        self.databases.get(name)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Database> {
        self.databases.get_mut(name)
    }

    /// False when it exists already.
    pub fn create(&mut self, name: &str) -> bool {
        if self.databases.contains_key(name) {
            return false;
        }
        self.databases.insert(name.into(), Database::new());
        true
    }

    /// Its feeds see the sender dropped and end.
    pub fn delete(&mut self, name: &str) -> bool {
        self.databases.remove(name).is_some()
    }
}

pub struct Database {
    /// The sequence of the last change (0: none yet).
    pub seq: u64,
    docs: HashMap<Box<str>, Doc>,
    /// Each document once, at the sequence of its last change.
    by_seq: BTreeMap<u64, Box<str>>,
    locals: HashMap<Box<str>, Local>,
    /// Carries `seq` to the feeds held on this database, and only to them.
    changed: watch::Sender<u64>,
}

pub struct Doc {
    pub seq: u64,
    pub leaves: Vec<Leaf>,
}

/// A leaf revision: `path[0]` is its own hash, `path[k]` its ancestor of generation
/// `pos - k`.
#[derive(Clone, Debug, PartialEq)]
pub struct Leaf {
    pub pos: u64,
    pub path: Vec<Box<str>>,
    pub deleted: bool,
    /// The size of the body it was written with.
    pub bytes: u32,
}

impl Leaf {
    pub fn rev(&self) -> String {
        format!("{}-{}", self.pos, self.path[0])
    }

    /// Whether this leaf is, or descends from, revision `pos`-`hash`.
    pub fn holds(&self, pos: u64, hash: &str) -> bool {
        pos <= self.pos
            && usize::try_from(self.pos - pos)
                .ok()
                .and_then(|k| self.path.get(k))
                .is_some_and(|h| &**h == hash)
    }
}

pub struct Local {
    pub rev: u64,
    /// The JSON object as written, less `_id` and `_rev`.
    pub body: Box<str>,
}

/// A new revision as a replicator sends it (`new_edits: false`): its generation, then its
/// hash and its ancestors' (newest first).
pub struct Incoming<'a> {
    pub pos: u64,
    pub ids: &'a [String],
    pub deleted: bool,
    pub bytes: u32,
}

/// Why an edit (`new_edits: true`) was refused.
#[derive(Debug, PartialEq)]
pub enum EditError {
    Conflict,
}

/// Splits `N-hash`.
pub fn parse_rev(rev: &str) -> Option<(u64, &str)> {
    let (pos, hash) = rev.split_once('-')?;
    let pos = pos.parse().ok().filter(|&p| p > 0)?;
    (!hash.is_empty()).then_some((pos, hash))
}

impl Database {
    fn new() -> Database {
        Database {
            seq: 0,
            docs: HashMap::new(),
            by_seq: BTreeMap::new(),
            locals: HashMap::new(),
            changed: watch::Sender::new(0),
        }
    }

    /// What a held feed waits on.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Tells the feeds of this database that it changed (once per request, not per
    /// document).
    pub fn announce(&self) {
        self.changed.send_replace(self.seq);
    }

    /// Every document's id, deleted ones too, in no order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.docs.keys().map(|id| &**id)
    }

    pub fn doc(&self, id: &str) -> Option<&Doc> {
        self.docs.get(id)
    }

    /// (documents whose winner is not deleted, documents whose winner is).
    pub fn counts(&self) -> (u64, u64) {
        let deleted = self.docs.values().filter(|d| d.winner().deleted).count() as u64;
        (self.docs.len() as u64 - deleted, deleted)
    }

    /// The documents changed after `since`, in sequence order.
    pub fn changes_since(&self, since: u64) -> impl Iterator<Item = (u64, &str, &Doc)> {
        self.by_seq
            .range(since.saturating_add(1)..)
            .filter_map(|(&seq, id)| Some((seq, &**id, self.docs.get(id)?)))
    }

    /// How many documents changed after `seq`.
    pub fn pending_after(&self, seq: u64) -> u64 {
        self.by_seq.range(seq.saturating_add(1)..).count() as u64
    }

    /// Whether the document holds revision `rev` anywhere in its tree.
    pub fn knows(&self, id: &str, rev: &str) -> bool {
        let Some((pos, hash)) = parse_rev(rev) else {
            return false;
        };
        self.docs
            .get(id)
            .is_some_and(|d| d.leaves.iter().any(|l| l.holds(pos, hash)))
    }

    /// Stores a revision as it comes (`new_edits: false`): it extends the leaf it
    /// descends from, or branches. False when the document already held it.
    pub fn merge(&mut self, id: &str, new: Incoming<'_>) -> bool {
        let Some(hash) = new.ids.first() else {
            return false;
        };
        if self.knows(id, &format!("{}-{hash}", new.pos)) {
            return false;
        }
        let doc = self.docs.entry(id.into()).or_insert_with(|| Doc {
            seq: 0,
            leaves: Vec::new(),
        });
        let oldest = new.pos + 1 - new.ids.len().min(new.pos as usize) as u64;
        // The leaf it extends: one whose revision is on the new path.
        let extended = doc.leaves.iter().position(|l| {
            l.pos >= oldest
                && l.pos <= new.pos
                && new.ids.get((new.pos - l.pos) as usize).map(|h| &**h) == Some(&*l.path[0])
        });
        // Beyond the new path, the ancestry it shares with a leaf (its oldest revision
        // found in that leaf's path).
        let tail = |leaf: &Leaf| -> Vec<Box<str>> {
            let k = (leaf.pos + 1).saturating_sub(oldest) as usize;
            leaf.path.get(k..).map(|t| t.to_vec()).unwrap_or_default()
        };
        let mut path: Vec<Box<str>> = new.ids.iter().map(|h| h.as_str().into()).collect();
        let leaf = match extended {
            Some(at) => {
                let old = doc.leaves.swap_remove(at);
                path.extend(tail(&old));
                path
            }
            None => {
                let shared = doc.leaves.iter().find(|l| {
                    new.ids
                        .last()
                        .is_some_and(|h| l.pos >= oldest && l.holds(oldest, h))
                });
                if let Some(l) = shared {
                    path.extend(tail(l));
                }
                path
            }
        };
        let mut path = leaf;
        path.truncate(REVS_LIMIT);
        doc.leaves.push(Leaf {
            pos: new.pos,
            path,
            deleted: new.deleted,
            bytes: new.bytes,
        });
        self.bump(id);
        true
    }

    /// An edit as a client makes it (`new_edits: true`): `parent` must be a leaf (or
    /// absent when the document is new or its winner deleted). The new revision.
    pub fn edit(
        &mut self,
        id: &str,
        parent: Option<&str>,
        deleted: bool,
        bytes: u32,
    ) -> Result<String, EditError> {
        let doc = self.docs.entry(id.into()).or_insert_with(|| Doc {
            seq: 0,
            leaves: Vec::new(),
        });
        let at = match parent {
            Some(rev) => {
                let (pos, hash) = parse_rev(rev).ok_or(EditError::Conflict)?;
                Some(
                    doc.leaves
                        .iter()
                        .position(|l| l.pos == pos && &*l.path[0] == hash)
                        .ok_or(EditError::Conflict)?,
                )
            }
            None if doc.leaves.is_empty() => None,
            None if doc.winner().deleted => Some(doc.winner_index()),
            None => return Err(EditError::Conflict),
        };
        let (pos, mut path) = match at {
            Some(i) => {
                let old = doc.leaves.swap_remove(i);
                (old.pos + 1, old.path)
            }
            None => (1, Vec::new()),
        };
        // FNV's offset basis, or the parent's hash: a new hash for each id, parent and size.
        let seed = path
            .first()
            .map_or(0xcbf2_9ce4_8422_2325, |h| fnv1a(h.as_bytes(), pos));
        let hash = format!(
            "{:016x}{:016x}",
            fnv1a(id.as_bytes(), seed ^ pos),
            fnv1a(
                id.as_bytes(),
                seed.rotate_left(29) ^ bytes as u64 ^ deleted as u64
            )
        );
        path.insert(0, hash.into());
        path.truncate(REVS_LIMIT);
        let leaf = Leaf {
            pos,
            path,
            deleted,
            bytes,
        };
        let rev = leaf.rev();
        doc.leaves.push(leaf);
        self.bump(id);
        Ok(rev)
    }

    /// A new sequence for a document that changed.
    fn bump(&mut self, id: &str) {
        self.seq += 1;
        let Some(doc) = self.docs.get_mut(id) else {
            return;
        };
        if doc.seq != 0 {
            self.by_seq.remove(&doc.seq);
        }
        doc.seq = self.seq;
        self.by_seq.insert(self.seq, id.into());
    }

    pub fn local(&self, id: &str) -> Option<&Local> {
        self.locals.get(id)
    }

    /// Writes a `_local` document if `rev` is its current revision (`0-N`; none when it
    /// does not exist yet, which is also accepted for one that does not exist). Its new
    /// revision number.
    pub fn put_local(&mut self, id: &str, rev: Option<&str>, body: Box<str>) -> Option<u64> {
        let current = self.locals.get(id).map(|l| l.rev);
        let given = rev.and_then(|r| r.strip_prefix("0-")?.parse::<u64>().ok());
        if current.is_some() && given != current {
            return None;
        }
        let rev = current.unwrap_or(0) + 1;
        self.locals.insert(id.into(), Local { rev, body });
        Some(rev)
    }

    pub fn delete_local(&mut self, id: &str) -> bool {
        self.locals.remove(id).is_some()
    }
}

impl Doc {
    /// CouchDB's winner: leaves not deleted first, then the highest generation, then the
    /// highest hash.
    pub fn winner(&self) -> &Leaf {
        &self.leaves[self.winner_index()]
    }

    fn winner_index(&self) -> usize {
        let mut best = 0;
        for (i, leaf) in self.leaves.iter().enumerate() {
            let b = &self.leaves[best];
            if (!leaf.deleted, leaf.pos, &leaf.path[0]) > (!b.deleted, b.pos, &b.path[0]) {
                best = i;
            }
        }
        best
    }

    /// The leaves, the winner first (as `_changes?style=all_docs` lists them).
    pub fn leaves_winner_first(&self) -> impl Iterator<Item = &Leaf> {
        let w = self.winner_index();
        std::iter::once(&self.leaves[w]).chain(
            self.leaves
                .iter()
                .enumerate()
                .filter(move |&(i, _)| i != w)
                .map(|(_, l)| l),
        )
    }

    /// `latest=true`: the leaves that are or descend from `pos`-`hash`.
    pub fn leaves_from(&self, pos: u64, hash: &str) -> impl Iterator<Item = &Leaf> {
        self.leaves.iter().filter(move |l| l.holds(pos, hash))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn incoming(pos: u64, ids: &[String]) -> Incoming<'_> {
        Incoming {
            pos,
            ids,
            deleted: false,
            bytes: 10,
        }
    }

    #[test]
    fn merge_extends_branches_and_ignores_what_it_has() {
        let mut db = Database::new();
        let one = ids(&["a"]);
        assert!(db.merge("d", incoming(1, &one)));
        assert!(!db.merge("d", incoming(1, &one)));
        let three = ids(&["c", "b", "a"]);
        assert!(db.merge("d", incoming(3, &three)));
        let doc = db.doc("d").unwrap();
        assert_eq!(doc.leaves.len(), 1);
        assert_eq!(doc.winner().rev(), "3-c");
        assert_eq!(doc.winner().path.len(), 3);
        assert!(db.knows("d", "2-b") && !db.knows("d", "2-x"));
        // A branch from 2-b: a conflict whose ancestry reaches back to 1-a.
        let other = ids(&["z", "b"]);
        assert!(db.merge("d", incoming(3, &other)));
        let doc = db.doc("d").unwrap();
        assert_eq!(doc.leaves.len(), 2);
        assert_eq!(doc.winner().rev(), "3-z");
        let z = doc.leaves.iter().find(|l| &*l.path[0] == "z").unwrap();
        assert_eq!(z.path, vec!["z".into(), "b".into(), Box::<str>::from("a")]);
        assert_eq!(db.seq, 3);
        assert_eq!(db.changes_since(0).count(), 1);
        assert_eq!(doc.leaves_from(2, "b").count(), 2);
        assert_eq!(doc.leaves_from(3, "c").count(), 1);
    }

    #[test]
    fn deleted_leaves_lose_and_edits_need_a_leaf() {
        let mut db = Database::new();
        let first = db.edit("d", None, false, 5).unwrap();
        assert!(first.starts_with("1-"));
        assert_eq!(db.edit("d", None, false, 5), Err(EditError::Conflict));
        assert_eq!(
            db.edit("d", Some("1-nope"), false, 5),
            Err(EditError::Conflict)
        );
        let second = db.edit("d", Some(&first), false, 5).unwrap();
        assert!(second.starts_with("2-"));
        let branch = ids(&["zzzz", &first[2..]]);
        let mut gone = incoming(2, &branch);
        gone.deleted = true;
        assert!(db.merge("d", gone));
        let doc = db.doc("d").unwrap();
        assert_eq!(doc.winner().rev(), second, "a deleted leaf never wins");
        assert_eq!(doc.leaves_winner_first().next().unwrap().rev(), second);
        assert_eq!(db.counts(), (1, 0));
    }

    #[test]
    fn locals_need_their_current_revision() {
        let mut db = Database::new();
        assert_eq!(db.put_local("r", None, "{}".into()), Some(1));
        assert_eq!(db.put_local("r", None, "{}".into()), None);
        assert_eq!(db.put_local("r", Some("0-1"), "{}".into()), Some(2));
        assert_eq!(db.put_local("r", Some("0-1"), "{}".into()), None);
        assert!(db.delete_local("r"));
        assert_eq!(db.put_local("r", Some("0-7"), "{}".into()), Some(1));
    }
}
