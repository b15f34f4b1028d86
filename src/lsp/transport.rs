//! JSON-RPC framing over a byte stream (`Content-Length` headers), tolerant of bad input.
//!
//! `lsp-server`'s own stdio transport ends the connection on the first payload that is not
//! valid JSON; a language server must answer such a message with a `ParseError` (id `null`)
//! and read on, so reading is done here and only `lsp-server`'s message types are reused.

use std::io::{self, BufRead, Read, Write};
use std::sync::mpsc::{sync_channel, Receiver};

use lsp_server::{ErrorCode, Message, Notification, Request, Response};
use serde_json::{json, Value};

/// The largest payload read into memory; a larger one is skipped and answered with an error.
const MAX_PAYLOAD: usize = 64 << 20;

/// What the reader hands to the server.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A frame that is not a JSON-RPC message: answered with this error, `id` as found
    /// (`null` when the id could not be read).
    Invalid {
        id: Value,
        code: i32,
        message: String,
    },
    /// Nothing to answer (a response that cannot be read): only logged.
    Ignored(String),
}

/// Reads frames from `input` on a thread of its own. The channel closes at end of input or
/// on a read error.
pub fn spawn_reader<R: Read + Send + 'static>(input: R) -> Receiver<Incoming> {
    let (sender, receiver) = sync_channel(64);
    std::thread::Builder::new()
        .name("retrylint-lsp-reader".into())
        .spawn(move || {
            let mut input = io::BufReader::new(input);
            loop {
                let incoming = match read_frame(&mut input) {
                    Ok(Some(Ok(payload))) => decode(&payload),
                    Ok(Some(Err(message))) => Incoming::Invalid {
                        id: Value::Null,
                        code: ErrorCode::ParseError as i32,
                        message,
                    },
                    Ok(None) | Err(_) => break,
                };
                let is_exit = matches!(&incoming, Incoming::Message(Message::Notification(n)) if n.method == "exit");
                if sender.send(incoming).is_err() || is_exit {
                    break;
                }
            }
        })
        .expect("a thread can be spawned");
    receiver
}

/// One frame's payload, or why the frame is unusable (its payload, if any, was skipped).
/// `None` at a clean end of input.
pub fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Result<Vec<u8>, String>>> {
    let mut length: Option<usize> = None;
    let mut bad_header: Option<String> = None;
    let mut line = String::new();
    let mut seen_any = false;
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            if seen_any {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "input ended inside a header",
                ));
            }
            return Ok(None);
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if !seen_any {
                // Blank lines between frames are tolerated.
                continue;
            }
            break;
        }
        seen_any = true;
        match header.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => bad_header = Some(format!("invalid Content-Length header `{}`", value.trim())),
                }
            }
            Some(_) => {}
            None => bad_header = Some(format!("invalid header line `{header}`")),
        }
    }
    let Some(length) = length else {
        return Ok(Some(Err(
            bad_header.unwrap_or_else(|| "missing Content-Length header".into())
        )));
    };
    if length > MAX_PAYLOAD {
        io::copy(&mut input.take(length as u64), &mut io::sink())?;
        return Ok(Some(Err(format!(
            "payload of {length} bytes is over the {MAX_PAYLOAD}-byte limit"
        ))));
    }
    let mut payload = vec![0; length];
    input.read_exact(&mut payload)?;
    Ok(Some(match bad_header {
        Some(message) => Err(message),
        None => Ok(payload),
    }))
}

/// A payload as a message: `ParseError` when it is not JSON, `InvalidRequest` when it is JSON
/// but not a request, response or notification.
fn decode(payload: &[u8]) -> Incoming {
    let value: Value = match serde_json::from_slice(payload) {
        Ok(value) => value,
        Err(e) => {
            return Incoming::Invalid {
                id: Value::Null,
                code: ErrorCode::ParseError as i32,
                message: format!("malformed JSON: {e}"),
            }
        }
    };
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let id = if id.is_string() || id.is_number() {
        id
    } else {
        Value::Null
    };
    let invalid = |id: Value, message: &str| Incoming::Invalid {
        id,
        code: ErrorCode::InvalidRequest as i32,
        message: message.into(),
    };
    let Some(object) = value.as_object() else {
        return invalid(Value::Null, "a JSON-RPC message is an object");
    };
    match object.get("method") {
        Some(Value::String(_)) if object.get("id").is_some_and(|id| !id.is_null()) => {
            match serde_json::from_value::<Request>(value) {
                Ok(request) => Incoming::Message(Message::Request(request)),
                Err(e) => invalid(id, &format!("invalid request: {e}")),
            }
        }
        Some(Value::String(_)) => match serde_json::from_value::<Notification>(value) {
            Ok(notification) => Incoming::Message(Message::Notification(notification)),
            Err(e) => invalid(Value::Null, &format!("invalid notification: {e}")),
        },
        Some(_) => invalid(id, "`method` must be a string"),
        None if object.contains_key("result") || object.contains_key("error") => {
            match serde_json::from_value::<Response>(value) {
                Ok(response) => Incoming::Message(Message::Response(response)),
                // A response is never answered, even a broken one.
                Err(e) => Incoming::Ignored(format!("invalid response: {e}")),
            }
        }
        None => invalid(id, "not a JSON-RPC request, response or notification"),
    }
}

/// Writes messages with `Content-Length` framing, flushing each.
pub struct Output<W: Write> {
    writer: W,
}

impl<W: Write> Output<W> {
    pub fn new(writer: W) -> Output<W> {
        Output { writer }
    }

    pub fn send(&mut self, message: Message) -> io::Result<()> {
        message.write(&mut self.writer)?;
        self.writer.flush()
    }

    /// An error response whose id may be `null` (which `lsp_server::Response` cannot hold).
    pub fn send_error(&mut self, id: Value, code: i32, message: &str) -> io::Result<()> {
        let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }).to_string();
        write!(self.writer, "Content-Length: {}\r\n\r\n{body}", body.len())?;
        self.writer.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<Result<Vec<u8>, String>> {
        let mut reader = io::BufReader::new(input);
        let mut out = Vec::new();
        while let Ok(Some(frame)) = read_frame(&mut reader) {
            out.push(frame);
        }
        out
    }

    #[test]
    fn reads_frames_and_survives_bad_ones() {
        let input = b"Content-Length: 2\r\n\r\n{}Content-Type: x\r\n\r\nContent-Length: 3\r\n\r\n[1]\
                      Content-Length: nope\r\n\r\nContent-Length: 4\n\nnull";
        let found = frames(input);
        assert_eq!(found.len(), 5);
        assert_eq!(found[0], Ok(b"{}".to_vec()));
        assert!(found[1].as_ref().unwrap_err().contains("missing Content-Length"));
        assert_eq!(found[2], Ok(b"[1]".to_vec()));
        assert!(found[3].as_ref().unwrap_err().contains("invalid Content-Length"));
        assert_eq!(found[4], Ok(b"null".to_vec()));
    }

    #[test]
    fn decodes_invalid_messages_as_errors() {
        match decode(b"{not json") {
            Incoming::Invalid { id, code, .. } => {
                assert_eq!(id, Value::Null);
                assert_eq!(code, -32700);
            }
            other => panic!("{other:?}"),
        }
        match decode(br#"{"jsonrpc":"2.0","id":7,"method":5}"#) {
            Incoming::Invalid { id, code, .. } => {
                assert_eq!(id, json!(7));
                assert_eq!(code, -32600);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            Incoming::Message(Message::Request(_))
        ));
    }
}
