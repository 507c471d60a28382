//! What a device holds of its documents: for each, its leaf revisions (with their deleted
//! flags) and the chains of local edits not yet pushed, never bodies. Winners and conflicts
//! follow CouchDB's rule.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::chain::{Chain, RevMaker};
use crate::workload::Rev;

/// The most leaves a document keeps; a pulled revision beyond them is refused (counted
/// as a failure by the pull).
pub const MAX_LEAVES: usize = 1024;

/// The most unpushed chains one document holds (a chain grows from the winner; a second
/// one starts only when a pulled revision won over the first before it was pushed).
pub const MAX_CHAINS: usize = 8;

/// The most local edits of one document kept unpushed (its `_revisions` then lists
/// them all, about 36 bytes each).
pub const MAX_CHAIN: u32 = 100_000;

/// The longest document id a device keeps (CouchDB allows longer; none of a benchmark's).
pub const MAX_ID_BYTES: usize = 4096;

/// The longest revision a device takes from a server (CouchDB's and PouchDB's are a
/// generation and 32 hex digits): a server's longer ones are refused, not kept per leaf.
pub const MAX_REV_BYTES: usize = 256;

/// A revision a server wrote, within [`MAX_REV_BYTES`].
pub fn rev_of_server(text: &str) -> Option<Rev> {
    if text.len() > MAX_REV_BYTES {
        return None;
    }
    Rev::parse(text)
}

/// One leaf of a document's revision tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    pub rev: Rev,
    pub deleted: bool,
}

/// One document as the device holds it.
#[derive(Clone, Debug, Default)]
struct Doc {
    leaves: Vec<Leaf>,
    chains: Vec<Chain>,
    /// The device's sequence of the document's last local edit (0: none unpushed).
    seq: u64,
}

/// A document as it stands on the device: what the fleet compares with the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentState<'a> {
    pub id: &'a str,
    pub winner: &'a Rev,
    /// Whether the winner is a deletion (then the document is deleted).
    pub deleted: bool,
    /// The other non-deleted leaves, highest first (CouchDB's `_conflicts`).
    pub conflicts: Vec<&'a Rev>,
}

/// A revision's ancestry as `_revisions` gives it: generation `start` is `ids[0]`,
/// `start - 1` is `ids[1]`, and so on.
#[derive(Clone, Copy, Debug)]
pub struct History<'a> {
    pub start: u32,
    pub ids: &'a [String],
}

impl History<'_> {
    /// Whether `rev` is on this path.
    pub fn contains(&self, rev: &Rev) -> bool {
        let generation = rev.generation();
        if generation > self.start {
            return false;
        }
        let back = (self.start - generation) as usize;
        self.ids.get(back).is_some_and(|id| hash_is(rev, id))
    }
}

/// Whether `rev`'s part after the dash is `hash`.
fn hash_is(rev: &Rev, hash: &str) -> bool {
    match rev {
        Rev::Hex { .. } | Rev::Text(_) => {
            let mut text = String::with_capacity(rev.text_len());
            rev.write_to(&mut text);
            text.split_once('-').is_some_and(|(_, h)| h == hash)
        }
    }
}

/// CouchDB's order of revisions for the winner: later generation first, then the higher
/// hash (as text).
pub fn rev_order(a: &Rev, b: &Rev) -> Ordering {
    a.generation()
        .cmp(&b.generation())
        .then_with(|| match (a, b) {
            (Rev::Hex { digest: x, .. }, Rev::Hex { digest: y, .. }) => x.cmp(y),
            _ => hash_text(a).cmp(&hash_text(b)),
        })
}

fn hash_text(rev: &Rev) -> String {
    let mut text = String::new();
    rev.write_to(&mut text);
    match text.split_once('-') {
        Some((_, hash)) => hash.to_string(),
        None => text,
    }
}

/// CouchDB's winner: non-deleted leaves before deleted ones, then [`rev_order`].
fn leaf_order(a: &Leaf, b: &Leaf) -> Ordering {
    (!a.deleted)
        .cmp(&!b.deleted)
        .then_with(|| rev_order(&a.rev, &b.rev))
}

impl Doc {
    fn winner(&self) -> Option<&Leaf> {
        self.leaves.iter().max_by(|a, b| leaf_order(a, b))
    }

    fn has_leaf(&self, rev: &Rev) -> bool {
        self.leaves.iter().any(|leaf| leaf.rev == *rev)
    }
}

/// What a pulled revision did to the replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// It replaced the leaves its history holds.
    Extended,
    /// It shares no leaf: a new branch (a conflict, or the document's first revision).
    Branched,
    /// The device holds it, or a descendant of it, already.
    Known,
    /// The document holds [`MAX_LEAVES`] leaves, or its id is too long: not kept.
    Refused,
}

/// The documents of one device.
pub struct Replica {
    maker: RevMaker,
    docs: BTreeMap<Box<str>, Doc>,
    /// Documents with local edits not yet pushed, by the sequence of their last edit.
    unpushed: BTreeMap<u64, Box<str>>,
    /// The device's own sequence: one more with every local edit.
    seq: u64,
    /// Chains started, so each has a number of its own.
    chains: u64,
}

impl Replica {
    pub fn new(maker: RevMaker) -> Replica {
        Replica {
            maker,
            docs: BTreeMap::new(),
            unpushed: BTreeMap::new(),
            seq: 0,
            chains: 0,
        }
    }

    pub fn maker(&self) -> &RevMaker {
        &self.maker
    }

    /// A local write of `id`: a new document, or a new revision of the one it holds (a
    /// deleted one is written again, as CouchDB does). `None` only at a bound.
    pub fn write(&mut self, id: &str) -> Option<Rev> {
        if id.len() > MAX_ID_BYTES {
            return None;
        }
        self.local_edit(id, false)
    }

    /// A local edit (`deleted`: a deletion) of the winner the device holds of `id`;
    /// `None` when it holds no live document `id`, or at a bound.
    pub fn edit(&mut self, id: &str, deleted: bool) -> Option<Rev> {
        let doc = self.docs.get(id)?;
        if doc.winner().is_none_or(|winner| winner.deleted) {
            return None;
        }
        self.local_edit(id, deleted)
    }

    fn local_edit(&mut self, id: &str, deleted: bool) -> Option<Rev> {
        let next_chain = self.chains.saturating_add(1);
        let doc = self.docs.entry(id.into()).or_default();
        let winner = doc.winner().map(|leaf| leaf.rev.clone());
        let extends = winner.as_ref().and_then(|winner| {
            doc.chains.iter().position(|chain| {
                chain.tip_generation() == winner.generation()
                    && chain.holds(&self.maker, id, winner)
            })
        });
        let chain_index = match extends {
            Some(index) if doc.chains[index].length < MAX_CHAIN => index,
            Some(_) => return None,
            None if doc.chains.len() >= MAX_CHAINS => return None,
            None => {
                doc.chains.push(Chain {
                    base: winner.clone(),
                    number: next_chain,
                    length: 0,
                });
                self.chains = next_chain;
                doc.chains.len() - 1
            }
        };
        let chain = &mut doc.chains[chain_index];
        chain.length += 1;
        let rev = self.maker.rev(id, chain.number, chain.tip_generation());
        doc.leaves.retain(|leaf| Some(&leaf.rev) != winner.as_ref());
        doc.leaves.push(Leaf {
            rev: rev.clone(),
            deleted,
        });
        // Most documents hold one leaf: kept at the size they need, not a Vec's growth.
        doc.leaves.shrink_to_fit();
        self.seq = self.seq.saturating_add(1);
        if doc.seq != 0 {
            self.unpushed.remove(&doc.seq);
        }
        doc.seq = self.seq;
        self.unpushed.insert(self.seq, id.into());
        Some(rev)
    }

    /// Documents with local edits not yet pushed.
    pub fn unpushed(&self) -> usize {
        self.unpushed.len()
    }

    /// The device's own sequence (of its last local edit).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Up to `most` documents with unpushed edits made after sequence `since`, oldest
    /// first, with the sequence of each one's last edit.
    pub fn unpushed_since(&self, since: u64, most: usize) -> Vec<(u64, Box<str>)> {
        self.unpushed
            .range(since.saturating_add(1)..)
            .take(most)
            .map(|(seq, id)| (*seq, id.clone()))
            .collect()
    }

    /// The tips of `id`'s unpushed chains, each with its history down to its base, and
    /// whether it is a deletion.
    pub fn unpushed_of(&self, id: &str) -> Vec<(Leaf, Vec<Rev>)> {
        let Some(doc) = self.docs.get(id) else {
            return Vec::new();
        };
        doc.chains
            .iter()
            .filter_map(|chain| {
                let tip = self.maker.rev(id, chain.number, chain.tip_generation());
                let leaf = doc.leaves.iter().find(|leaf| leaf.rev == tip)?;
                Some((leaf.clone(), chain.history(&self.maker, id)))
            })
            .collect()
    }

    /// The server holds `rev` of `id` now: the chain it tips is pushed, and the next
    /// edit grows from it.
    pub fn pushed(&mut self, id: &str, rev: &Rev) {
        let Some(doc) = self.docs.get_mut(id) else {
            return;
        };
        let maker = &self.maker;
        doc.chains.retain(|chain| {
            !(chain.tip_generation() == rev.generation() && chain.holds(maker, id, rev))
        });
        if doc.chains.is_empty() && doc.seq != 0 {
            self.unpushed.remove(&doc.seq);
            doc.seq = 0;
        }
    }

    /// Whether the device lacks revision `rev` of `id` (holds neither it nor a
    /// descendant it knows of).
    pub fn lacks(&self, id: &str, rev: &Rev) -> bool {
        let Some(doc) = self.docs.get(id) else {
            return true;
        };
        !(doc.has_leaf(rev)
            || doc
                .chains
                .iter()
                .any(|chain| chain.base.as_ref() == Some(rev) || chain.holds(&self.maker, id, rev)))
    }

    /// Stores a revision pulled from the server, with its ancestry: it replaces the leaves
    /// on its path, or starts a branch of its own.
    pub fn store(&mut self, id: &str, leaf: Leaf, history: History<'_>) -> Stored {
        if !self.lacks(id, &leaf.rev) {
            return Stored::Known;
        }
        if id.len() > MAX_ID_BYTES {
            return Stored::Refused;
        }
        let doc = self.docs.entry(id.into()).or_default();
        let before = doc.leaves.len();
        doc.leaves.retain(|held| !history.contains(&held.rev));
        let extended = doc.leaves.len() < before;
        if doc.leaves.len() >= MAX_LEAVES {
            return Stored::Refused;
        }
        doc.leaves.push(leaf);
        doc.leaves.shrink_to_fit();
        // A chain whose tip is no longer a leaf is on the server already (its push was
        // applied though its answer was lost): nothing of it is left to push.
        let maker = &self.maker;
        let leaves = &doc.leaves;
        doc.chains.retain(|chain| {
            let tip = maker.rev(id, chain.number, chain.tip_generation());
            leaves.iter().any(|leaf| leaf.rev == tip)
        });
        if doc.chains.is_empty() && doc.seq != 0 {
            self.unpushed.remove(&doc.seq);
            doc.seq = 0;
        }
        if extended {
            Stored::Extended
        } else {
            Stored::Branched
        }
    }

    /// The server lists `listed` as `id`'s leaves: a leaf the device holds from the server
    /// (not the tip of an unpushed chain, nor one of `kept`, just stored) that the
    /// server no longer lists has been extended there, even where the history that came
    /// no longer reaches it (a branch longer than `_revs_limit`); it goes, so that the
    /// device holds no conflict the server does not. Whether any went.
    pub fn drop_superseded(&mut self, id: &str, listed: &[Rev], kept: &[Rev]) -> bool {
        let Some(doc) = self.docs.get_mut(id) else {
            return false;
        };
        let maker = &self.maker;
        let chains = &doc.chains;
        let before = doc.leaves.len();
        doc.leaves.retain(|leaf| {
            listed.contains(&leaf.rev)
                || kept.contains(&leaf.rev)
                || chains.iter().any(|chain| chain.holds(maker, id, &leaf.rev))
        });
        doc.leaves.len() < before
    }

    /// The state of `id`, if the device holds it.
    pub fn document(&self, id: &str) -> Option<DocumentState<'_>> {
        let (id, doc) = self.docs.get_key_value(id)?;
        state_of(id, doc)
    }

    /// Every document, in id order.
    pub fn documents(&self) -> impl Iterator<Item = DocumentState<'_>> {
        self.docs.iter().filter_map(|(id, doc)| state_of(id, doc))
    }

    /// Whether `id` holds more than one non-deleted leaf.
    pub fn in_conflict(&self, id: &str) -> bool {
        self.docs
            .get(id)
            .is_some_and(|doc| doc.leaves.iter().filter(|leaf| !leaf.deleted).count() > 1)
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The bytes the documents take: ids, leaves, chains and the map's own entries.
    pub fn state_bytes(&self) -> usize {
        let entry = size_of::<(Box<str>, Doc)>();
        let docs: usize = self
            .docs
            .iter()
            .map(|(id, doc)| entry + id.len() + doc_bytes(doc))
            .sum();
        let unpushed: usize = self
            .unpushed
            .values()
            .map(|id| size_of::<(u64, Box<str>)>() + id.len())
            .sum();
        docs + unpushed
    }
}

fn doc_bytes(doc: &Doc) -> usize {
    let leaves: usize = doc
        .leaves
        .iter()
        .map(|leaf| match &leaf.rev {
            Rev::Text(text) => text.len(),
            Rev::Hex { .. } => 0,
        })
        .sum();
    let chains: usize = doc
        .chains
        .iter()
        .map(|chain| match &chain.base {
            Some(Rev::Text(text)) => text.len(),
            _ => 0,
        })
        .sum();
    doc.leaves.capacity() * size_of::<Leaf>()
        + leaves
        + doc.chains.capacity() * size_of::<Chain>()
        + chains
}

fn state_of<'a>(id: &'a str, doc: &'a Doc) -> Option<DocumentState<'a>> {
    let winner = doc.winner()?;
    let mut conflicts: Vec<&Rev> = doc
        .leaves
        .iter()
        .filter(|leaf| !leaf.deleted && leaf.rev != winner.rev)
        .map(|leaf| &leaf.rev)
        .collect();
    conflicts.sort_by(|a, b| rev_order(b, a));
    Some(DocumentState {
        id,
        winner: &winner.rev,
        deleted: winner.deleted,
        conflicts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(text: &str) -> Rev {
        Rev::parse(text).unwrap()
    }

    fn hash(rev: &Rev) -> String {
        let mut text = String::new();
        rev.write_to(&mut text);
        text.split_once('-').unwrap().1.to_string()
    }

    fn replica() -> Replica {
        Replica::new(RevMaker::new(1, "dev"))
    }

    fn pulled(replica: &mut Replica, id: &str, r: &str, deleted: bool, ids: &[&str]) -> Stored {
        let leaf = Leaf {
            rev: rev(r),
            deleted,
        };
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        let start = leaf.rev.generation();
        replica.store(id, leaf, History { start, ids: &ids })
    }

    #[test]
    fn the_winner_is_live_first_then_generation_then_hash() {
        let mut r = replica();
        assert_eq!(
            pulled(&mut r, "d", "2-aa", false, &["aa", "11"]),
            Stored::Branched
        );
        assert_eq!(
            pulled(&mut r, "d", "2-bb", false, &["bb", "11"]),
            Stored::Branched
        );
        assert_eq!(
            pulled(&mut r, "d", "3-cc", true, &["cc", "dd", "11"]),
            Stored::Branched
        );
        let state = r.document("d").unwrap();
        // The deleted generation-3 leaf loses to live ones; of those, the higher hash wins.
        assert_eq!(state.winner, &rev("2-bb"));
        assert!(!state.deleted);
        assert_eq!(state.conflicts, vec![&rev("2-aa")]);
        assert!(r.in_conflict("d"));
        // A live generation-3 leaf wins over both.
        assert_eq!(
            pulled(&mut r, "d", "3-ab", false, &["ab", "aa", "11"]),
            Stored::Extended
        );
        let state = r.document("d").unwrap();
        assert_eq!(state.winner, &rev("3-ab"));
        assert_eq!(state.conflicts, vec![&rev("2-bb")]);
    }

    #[test]
    fn only_deleted_leaves_make_a_deleted_document_without_conflicts() {
        let mut r = replica();
        pulled(&mut r, "d", "2-aa", true, &["aa", "11"]);
        pulled(&mut r, "d", "3-bb", true, &["bb", "cc", "11"]);
        let state = r.document("d").unwrap();
        assert_eq!((state.winner, state.deleted), (&rev("3-bb"), true));
        assert!(state.conflicts.is_empty());
        assert!(!r.in_conflict("d"));
    }

    #[test]
    fn a_pulled_revision_replaces_the_leaf_its_history_holds() {
        let mut r = replica();
        pulled(&mut r, "d", "1-aa", false, &["aa"]);
        assert_eq!(
            pulled(&mut r, "d", "3-cc", false, &["cc", "bb", "aa"]),
            Stored::Extended
        );
        assert_eq!(r.document("d").unwrap().winner, &rev("3-cc"));
        assert!(r.document("d").unwrap().conflicts.is_empty());
        // Known again, or an ancestor the history no longer reaches: nothing changes.
        assert_eq!(
            pulled(&mut r, "d", "3-cc", false, &["cc", "bb", "aa"]),
            Stored::Known
        );
        // A history that does not reach a leaf makes a branch.
        assert_eq!(
            pulled(&mut r, "d", "2-ee", false, &["ee", "ff"]),
            Stored::Branched
        );
        assert_eq!(r.document("d").unwrap().conflicts, vec![&rev("2-ee")]);
    }

    #[test]
    fn local_edits_grow_one_chain_from_the_winner_and_are_pushed_together() {
        let mut r = replica();
        pulled(&mut r, "d", "4-aa", false, &["aa", "bb"]);
        let first = r.edit("d", false).unwrap();
        assert_eq!(first.generation(), 5);
        for _ in 0..1998 {
            r.edit("d", false).unwrap();
        }
        let tip = r.edit("d", true).unwrap();
        assert_eq!(tip.generation(), 2004);
        assert_eq!(r.unpushed(), 1);
        let offers = r.unpushed_of("d");
        assert_eq!(offers.len(), 1);
        let (leaf, history) = &offers[0];
        assert_eq!((&leaf.rev, leaf.deleted), (&tip, true));
        assert_eq!(history.len(), 2001);
        assert_eq!(history[0], tip);
        assert_eq!(history[1999], first);
        assert_eq!(history[2000], rev("4-aa"));
        // Deleted: no more edits; a write brings it back, on the same chain.
        assert!(r.edit("d", false).is_none());
        let back = r.write("d").unwrap();
        assert_eq!(back.generation(), 2005);
        assert_eq!(r.unpushed_of("d").len(), 1);
        r.pushed("d", &back);
        assert_eq!(r.unpushed(), 0);
        assert!(r.unpushed_of("d").is_empty());
        assert!(!r.lacks("d", &back));
    }

    #[test]
    fn a_pulled_revision_that_wins_over_an_unpushed_chain_leaves_it_as_a_conflict() {
        let mut r = replica();
        pulled(&mut r, "d", "1-aa", false, &["aa"]);
        let mine = r.edit("d", false).unwrap();
        // Another device's edit of the same base arrives first.
        assert_eq!(
            pulled(&mut r, "d", "2-ff", false, &["ff", "aa"]),
            Stored::Branched
        );
        assert!(r.in_conflict("d"));
        assert_eq!(r.unpushed_of("d").len(), 1);
        assert!(!r.lacks("d", &rev("1-aa")), "the chain's base is known");
        // The server now holds a child of my revision: the chain is on the server.
        let child = format!("3-{}", "e".repeat(32));
        let ids = [&"e".repeat(32)[..], &hash(&mine), "aa"];
        assert_eq!(pulled(&mut r, "d", &child, false, &ids), Stored::Extended);
        assert_eq!(r.unpushed(), 0);
    }

    #[test]
    fn new_documents_are_unpushed_in_the_order_written() {
        let mut r = replica();
        let a = r.write("a").unwrap();
        r.write("b").unwrap();
        r.write("a").unwrap();
        assert_eq!(a.generation(), 1);
        let order: Vec<Box<str>> = r
            .unpushed_since(0, 10)
            .into_iter()
            .map(|(_, id)| id)
            .collect();
        assert_eq!(order, vec!["b".into(), "a".into()]);
        assert_eq!(r.unpushed_since(0, 1).len(), 1);
        assert_eq!(r.unpushed_of("a")[0].1.len(), 2);
        assert!(r.edit("nothing", false).is_none());
        assert!(r.write(&"x".repeat(MAX_ID_BYTES + 1)).is_none());
        assert!(r.state_bytes() > 0);
    }

    #[test]
    fn a_leaf_the_server_no_longer_lists_was_extended_there_and_goes() {
        let mut r = replica();
        pulled(&mut r, "d", "1-aa", false, &["aa"]);
        let mine = r.edit("d", false).unwrap();
        // A tip whose stemmed history no longer reaches 1-aa: a branch at first.
        let far = format!("1200-{}", "f".repeat(32));
        let ids = vec!["f".repeat(32)];
        let leaf = Leaf {
            rev: rev(&far),
            deleted: false,
        };
        let start = 1200;
        assert_eq!(
            r.store("d", leaf, History { start, ids: &ids }),
            Stored::Branched
        );
        // The server lists only its tip; my unpushed edit stays, 1-aa was already replaced.
        assert!(!r.drop_superseded("d", &[rev(&far)], &[]));
        assert_eq!(r.document("d").unwrap().conflicts, vec![&mine]);
        r.pushed("d", &mine);
        // Pushed, then extended on the server (unlisted now): it goes.
        assert!(r.drop_superseded("d", &[rev(&far)], &[]));
        assert!(r.document("d").unwrap().conflicts.is_empty());
        // What was just stored stays even when the feed listed an older revision.
        assert!(!r.drop_superseded("d", &[rev("1-aa")], &[rev(&far)]));
        assert_eq!(r.document("d").unwrap().winner, &rev(&far));
    }

    #[test]
    fn state_is_small_per_document_and_a_long_chain_costs_no_more_than_a_short_one() {
        let mut r = replica();
        for n in 0..10_000 {
            pulled(&mut r, &format!("doc-{n:010}"), "1-aa", false, &["aa"]);
        }
        let per_document = r.state_bytes() / 10_000;
        assert!((50..=160).contains(&per_document), "{per_document} bytes");
        let mut one = replica();
        one.write("x").unwrap();
        let mut long = replica();
        for _ in 0..2000 {
            long.write("x").unwrap();
        }
        assert_eq!(one.state_bytes(), long.state_bytes());
    }
}
