//! Reading one file for the index: the overlay's text (an editor buffer, a fix in progress)
//! or the disk's, the prefilter's verdict, and extraction. The text of a parsed file is kept
//! with its facts; the text of a file the prefilter rules out is dropped at once.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::extract::{self, Prefilter};
use crate::index::Loaded;
use crate::source::{Note, SourceFile};

pub struct Loader<'o> {
    /// `None`: every file is parsed.
    pub prefilter: Option<Prefilter>,
    pub overlay: &'o HashMap<PathBuf, Arc<[u8]>>,
}

impl Loader<'_> {
    /// Loads `file`; with `filtered`, only if the prefilter keeps it.
    pub fn load(&self, file: &SourceFile, filtered: bool) -> Loaded {
        let text: Arc<[u8]> = match self.overlay.get(&file.absolute) {
            Some(text) => text.clone(),
            None => match std::fs::read(&file.absolute) {
                Ok(bytes) => bytes.into(),
                Err(e) => {
                    return Loaded {
                        notes: vec![Note {
                            path: file.path.clone(),
                            line: None,
                            message: format!("skipped: cannot read: {e}"),
                        }],
                        ..Loaded::default()
                    }
                }
            },
        };
        if filtered {
            if let Some(prefilter) = &self.prefilter {
                if !prefilter.is_relevant(file.language, &text) {
                    return Loaded {
                        prefiltered: true,
                        ..Loaded::default()
                    };
                }
            }
        }
        let facts = extract::extract_file(file.language, &text);
        Loaded {
            facts: Some(Arc::new(facts)),
            text: Some(text),
            notes: Vec::new(),
            prefiltered: false,
        }
    }
}
