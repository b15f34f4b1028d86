//! JSON as `package.json` and `tsconfig.json` mean it: objects keep their keys in the order
//! written (the conditions of a package's `exports` are tried in that order), comments and
//! trailing commas are allowed (tsconfig is JSONC), and files are read with a size bound.

use std::fmt;
use std::path::Path;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value whose objects keep their key order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The value of `key` in an object (the last one, as `JSON.parse` keeps it).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    /// An object's entries in order, each key once (the last value, as `JSON.parse` keeps it).
    pub fn entries(&self) -> Option<Vec<(&str, &Json)>> {
        let Json::Object(entries) = self else { return None };
        let mut out: Vec<(&str, &Json)> = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => out.push((key, value)),
            }
        }
        Some(out)
    }

    /// A string, or every string of an array (what `include`, `rootDirs` and `paths` targets hold).
    pub fn strings(&self) -> Option<Vec<&str>> {
        self.as_array()
            .map(|items| items.iter().filter_map(Json::as_str).collect())
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Number(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            entries.push((key, value));
        }
        Ok(Json::Object(entries))
    }
}

/// A JSON or JSONC file of the project (a `package.json`, a `tsconfig.json`), if it lies inside
/// one of `boundaries` (links resolved: a tsconfig `extends` that leads to `/etc` is not read),
/// is a regular file (a FIFO or a device could block), reads within the config size bound and
/// parses.
pub fn read(path: &Path, boundaries: &[std::path::PathBuf]) -> Option<Json> {
    let canonical = boundaries.iter().find_map(|b| crate::files::inside(path, b).ok())?;
    let bytes = crate::files::read_file(&canonical, crate::files::MAX_CONFIG_SIZE, false).ok()?;
    parse(std::str::from_utf8(&bytes).ok()?)
}

/// JSON or JSONC text.
pub fn parse(text: &str) -> Option<Json> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(&super::project_files::strip_json_comments(text)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_keep_their_order_and_comments_are_allowed() {
        let json = parse("{ // c\n \"z\": 1, \"a\": { \"import\": \"x\", \"types\": \"y\", }, \"z\": 2 }").unwrap();
        let keys: Vec<&str> = json.entries().unwrap().iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["z", "a"]);
        assert_eq!(json.get("z"), Some(&Json::Number(2.0)));
        let inner: Vec<&str> = json
            .get("a")
            .unwrap()
            .entries()
            .unwrap()
            .iter()
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(inner, ["import", "types"]);
    }
}
