//! Whether a device's replica agrees with the server for its scope: the same live
//! documents, the same winning revisions, the same conflicts (deleted leaves excluded on
//! both sides). The first difference found is named, ids bounded in length.

use std::collections::{BTreeMap, HashSet};

use crate::workload::rev::Rev;

/// The longest part of an id or revision a difference quotes.
const MOST_QUOTED: usize = 80;

/// One document as the server holds it: its winning revision and its conflicts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerDoc {
    pub winner: Rev,
    /// Sorted by [`rev_text`].
    pub conflicts: Vec<Rev>,
}

/// The server's live documents of one database by id (deleted ones are absent).
pub type ServerDocs = BTreeMap<Box<str>, ServerDoc>;

/// One document as a device holds it.
#[derive(Clone, Copy, Debug)]
pub struct HeldDoc<'a> {
    pub id: &'a str,
    pub winner: &'a Rev,
    pub conflicts: &'a [Rev],
    pub deleted: bool,
}

/// A revision's text form.
pub fn rev_text(rev: &Rev) -> String {
    let mut text = String::with_capacity(rev.text_len());
    rev.write_to(&mut text);
    text
}

/// Revisions sorted as [`ServerDoc::conflicts`] keeps them.
pub fn sorted(mut revs: Vec<Rev>) -> Vec<Rev> {
    revs.sort_by_cached_key(rev_text);
    revs
}

/// `text` cut to [`MOST_QUOTED`] characters, with `…` when cut. Escaping for the
/// terminal is the report's (every line goes through the text sink).
fn quoted(text: &str) -> String {
    match text.char_indices().nth(MOST_QUOTED) {
        Some((at, _)) => format!("{:?}…", &text[..at]),
        None => format!("{text:?}"),
    }
}

fn revs_text(revs: &[Rev]) -> String {
    let texts: Vec<String> = revs.iter().take(4).map(rev_text).collect();
    let more = revs.len().saturating_sub(4);
    if more > 0 {
        format!("[{} and {more} more]", texts.join(", "))
    } else {
        format!("[{}]", texts.join(", "))
    }
}

/// Compares a device's documents with the server's live documents that are in its
/// scope (`in_scope`): `Ok` when they agree, else the first difference.
pub fn compare<'a>(
    held: impl Iterator<Item = HeldDoc<'a>>,
    server: &ServerDocs,
    in_scope: impl Fn(&str) -> bool,
) -> Result<(), String> {
    let mut matched: HashSet<&str> = HashSet::new();
    for doc in held {
        if doc.deleted {
            if server.contains_key(doc.id) {
                return Err(format!("holds {} deleted, the server live", quoted(doc.id)));
            }
            continue;
        }
        let Some(theirs) = server.get(doc.id).filter(|_| in_scope(doc.id)) else {
            return Err(format!(
                "holds {} ({}), which the server does not hold live in its scope",
                quoted(doc.id),
                quoted(&rev_text(doc.winner))
            ));
        };
        if *doc.winner != theirs.winner {
            return Err(format!(
                "{}: winner {}, the server's {}",
                quoted(doc.id),
                quoted(&rev_text(doc.winner)),
                quoted(&rev_text(&theirs.winner))
            ));
        }
        let mine = sorted(doc.conflicts.to_vec());
        if mine != theirs.conflicts {
            return Err(format!(
                "{}: conflicts {}, the server's {}",
                quoted(doc.id),
                revs_text(&mine),
                revs_text(&theirs.conflicts)
            ));
        }
        matched.insert(doc.id);
    }
    // Every document it holds agreed: it may still lack one of its scope.
    let lacked = server
        .iter()
        .find(|(id, _)| in_scope(id) && !matched.contains(&***id));
    match lacked {
        Some((id, doc)) => Err(format!(
            "lacks {} (the server's winner {})",
            quoted(id),
            quoted(&rev_text(&doc.winner))
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(text: &str) -> Rev {
        Rev::parse(text).unwrap()
    }

    fn server(docs: &[(&str, &str, &[&str])]) -> ServerDocs {
        docs.iter()
            .map(|(id, winner, conflicts)| {
                let conflicts = sorted(conflicts.iter().map(|c| rev(c)).collect());
                (
                    Box::from(*id),
                    ServerDoc {
                        winner: rev(winner),
                        conflicts,
                    },
                )
            })
            .collect()
    }

    type Case<'a> = (&'a [(&'a str, &'a str, &'a [&'a str], bool)], &'a str);

    struct Held(Vec<(String, Rev, Vec<Rev>, bool)>);

    impl Held {
        fn of(docs: &[(&str, &str, &[&str], bool)]) -> Held {
            Held(
                docs.iter()
                    .map(|(id, w, c, d)| {
                        (
                            id.to_string(),
                            rev(w),
                            c.iter().map(|c| rev(c)).collect(),
                            *d,
                        )
                    })
                    .collect(),
            )
        }

        fn iter(&self) -> impl Iterator<Item = HeldDoc<'_>> {
            self.0
                .iter()
                .map(|(id, winner, conflicts, deleted)| HeldDoc {
                    id,
                    winner,
                    conflicts,
                    deleted: *deleted,
                })
        }
    }

    fn everything(_: &str) -> bool {
        true
    }

    #[test]
    fn the_same_documents_revisions_and_conflicts_agree() {
        let s = server(&[("a", "2-a", &["2-b", "2-c"]), ("b", "1-b", &[])]);
        // Conflicts in another order, and a tombstone the server lists nowhere.
        let held = Held::of(&[
            ("a", "2-a", &["2-c", "2-b"], false),
            ("b", "1-b", &[], false),
            ("gone", "3-x", &[], true),
        ]);
        assert_eq!(compare(held.iter(), &s, everything), Ok(()));
    }

    #[test]
    fn each_kind_of_difference_is_named() {
        let s = server(&[("a", "2-a", &["2-b"]), ("b", "1-b", &[])]);
        let cases: [Case<'_>; 5] = [
            (&[("a", "2-a", &["2-b"], false)], "lacks \"b\""),
            (
                &[("a", "1-a", &["2-b"], false), ("b", "1-b", &[], false)],
                "\"a\": winner \"1-a\", the server's \"2-a\"",
            ),
            (
                &[("a", "2-a", &[], false), ("b", "1-b", &[], false)],
                "\"a\": conflicts [], the server's [2-b]",
            ),
            (
                &[
                    ("a", "2-a", &["2-b"], false),
                    ("b", "1-b", &[], false),
                    ("c", "1-c", &[], false),
                ],
                "holds \"c\"",
            ),
            (&[("a", "2-a", &["2-b"], true)], "holds \"a\" deleted"),
        ];
        for (docs, expected) in cases {
            let found = compare(Held::of(docs).iter(), &s, everything).unwrap_err();
            assert!(found.contains(expected), "{found} lacks {expected}");
        }
    }

    #[test]
    fn only_the_scope_counts() {
        let s = server(&[
            ("mine-1", "1-a", &[]),
            ("other-1", "1-b", &[]),
            ("shared-0", "4-c", &[]),
        ]);
        let scope = |id: &str| id.starts_with("mine-") || id == "shared-0";
        let held = Held::of(&[
            ("mine-1", "1-a", &[], false),
            ("shared-0", "4-c", &[], false),
        ]);
        assert_eq!(compare(held.iter(), &s, scope), Ok(()));
        // Holding a document out of its scope is a difference.
        let more = Held::of(&[
            ("mine-1", "1-a", &[], false),
            ("other-1", "1-b", &[], false),
            ("shared-0", "4-c", &[], false),
        ]);
        assert!(
            compare(more.iter(), &s, scope)
                .unwrap_err()
                .contains("\"other-1\"")
        );
    }

    #[test]
    fn long_ids_are_cut() {
        let long = "x".repeat(500);
        let s = server(&[]);
        let held = Held(vec![(long, rev("1-a"), Vec::new(), false)]);
        let found = compare(held.iter(), &s, everything).unwrap_err();
        assert!(found.len() < 200 && found.contains('…'), "{found}");
    }
}
