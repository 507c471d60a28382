//! One number of a server's statistics, read leniently: where CouchDB writes a number a
//! server may write anything, and anything else is skipped over (never built into a
//! tree) and makes the figure unknown, never a zero and never a failed look.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A number as the server wrote it, or `None` for whatever else it wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figure(Option<Number>);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Number {
    Whole(u64),
    Negative(i64),
    Real(f64),
}

impl Figure {
    /// The figure as a count: a whole number, not negative.
    pub fn whole(self) -> Option<u64> {
        match self.0? {
            Number::Whole(n) => Some(n),
            _ => None,
        }
    }

    /// The figure as any number.
    pub fn real(self) -> Option<f64> {
        Some(match self.0? {
            Number::Whole(n) => n as f64,
            Number::Negative(n) => n as f64,
            Number::Real(x) => x,
        })
    }
}

impl<'de> Deserialize<'de> for Figure {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Figure, D::Error> {
        deserializer.deserialize_any(FigureVisitor)
    }
}

struct FigureVisitor;

impl<'de> Visitor<'de> for FigureVisitor {
    type Value = Figure;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Figure, E> {
        Ok(Figure(Some(Number::Whole(n))))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Figure, E> {
        Ok(Figure(Some(match u64::try_from(n) {
            Ok(n) => Number::Whole(n),
            Err(_) => Number::Negative(n),
        })))
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Figure, E> {
        Ok(Figure(Some(Number::Real(x))))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Figure, E> {
        Ok(Figure(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Figure, E> {
        Ok(Figure(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Figure, E> {
        Ok(Figure(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Figure, E> {
        Ok(Figure(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Figure, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Figure(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Figure, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Figure(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Figure {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn numbers_are_kept_and_anything_else_is_unknown() {
        assert_eq!(read("7").whole(), Some(7));
        assert_eq!(read("-3").whole(), None);
        assert_eq!(read("-3").real(), Some(-3.0));
        assert_eq!(read("2.5").real(), Some(2.5));
        assert_eq!(read("2.5").whole(), None);
        for odd in [r#""many""#, "true", "null", "[1,[2]]", r#"{"a":{"b":1}}"#] {
            assert_eq!(read(odd), Figure(None), "{odd}");
        }
    }
}
