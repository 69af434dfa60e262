//! Driving headless Chromium through the DevTools protocol: a small
//! WebSocket client (RFC 6455, text frames) and the few protocol calls the
//! HTML report's tests need. Chromium runs with --headless --no-sandbox,
//! its own profile directory, and no network (every host name resolves to
//! nothing); the page's requests are recorded so tests can check that it
//! asked for nothing outside the file.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The Chromium binary, if installed.
pub fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

struct Ws {
    s: TcpStream,
}

impl Ws {
    fn connect(url: &str) -> Result<Ws, String> {
        let rest = url.strip_prefix("ws://").ok_or("not a ws:// url")?;
        let (host, path) = rest.split_at(rest.find('/').ok_or("no path")?);
        let mut s = TcpStream::connect(host).map_err(|e| format!("connect {host}: {e}"))?;
        s.set_read_timeout(Some(Duration::from_secs(60))).ok();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: cGFyYWxsYXgtdGVzdC1rZXk=\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .map_err(|e| e.to_string())?;
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            s.read_exact(&mut b)
                .map_err(|e| format!("handshake: {e}"))?;
            head.push(b[0]);
        }
        let head = String::from_utf8_lossy(&head);
        if !head.starts_with("HTTP/1.1 101") {
            return Err(format!("handshake refused: {head}"));
        }
        Ok(Ws { s })
    }

    fn send(&mut self, text: &str) -> Result<(), String> {
        let p = text.as_bytes();
        let mut f = vec![0x81u8];
        match p.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n < 65536 => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0x80 | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let mask = [0x37u8, 0xa1, 0x5c, 0x02];
        f.extend_from_slice(&mask);
        f.extend(p.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.s.write_all(&f).map_err(|e| e.to_string())
    }

    fn recv(&mut self) -> Result<String, String> {
        let mut msg = Vec::new();
        loop {
            let mut h = [0u8; 2];
            self.s
                .read_exact(&mut h)
                .map_err(|e| format!("read: {e}"))?;
            let (fin, op) = (h[0] & 0x80 != 0, h[0] & 0x0f);
            let mut len = (h[1] & 0x7f) as u64;
            if len == 126 {
                let mut b = [0u8; 2];
                self.s.read_exact(&mut b).map_err(|e| e.to_string())?;
                len = u16::from_be_bytes(b) as u64;
            } else if len == 127 {
                let mut b = [0u8; 8];
                self.s.read_exact(&mut b).map_err(|e| e.to_string())?;
                len = u64::from_be_bytes(b);
            }
            let mut mask = [0u8; 4];
            if h[1] & 0x80 != 0 {
                self.s.read_exact(&mut mask).map_err(|e| e.to_string())?;
            }
            let mut p = vec![0u8; len as usize];
            self.s.read_exact(&mut p).map_err(|e| e.to_string())?;
            if h[1] & 0x80 != 0 {
                p.iter_mut()
                    .enumerate()
                    .for_each(|(i, b)| *b ^= mask[i % 4]);
            }
            match op {
                0x8 => return Err("connection closed".into()),
                0x9 | 0xa => continue,
                _ => msg.extend_from_slice(&p),
            }
            if fin {
                return String::from_utf8(msg).map_err(|e| e.to_string());
            }
        }
    }
}

/// A headless Chromium with one page attached.
pub struct Browser {
    child: Child,
    ws: Ws,
    next: u64,
    session: String,
    profile: PathBuf,
    /// Protocol events received so far (console, exceptions, requests).
    pub events: Vec<Value>,
}

impl Browser {
    /// Starts Chromium and opens an empty page.
    pub fn launch(bin: &Path, width: u32, height: u32) -> Result<Browser, String> {
        // A profile of its own: tests run browsers side by side, and a
        // second Chromium on a profile in use exits at once.
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let profile = std::env::temp_dir().join(format!(
            "parallax-chromium-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut child = Command::new(bin)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                "--disable-background-networking",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            match lines.next() {
                Some(Ok(l)) => {
                    if let Some(i) = l.find("ws://") {
                        break l[i..].trim().to_string();
                    }
                }
                _ => {
                    let _ = child.kill();
                    return Err("chromium exited before listening".into());
                }
            }
        };
        // Keep draining stderr so Chromium never blocks on it.
        std::thread::spawn(move || for _ in lines {});
        let ws = Ws::connect(&url)?;
        let mut b = Browser {
            child,
            ws,
            next: 0,
            session: String::new(),
            profile,
            events: Vec::new(),
        };
        let t = b.call_on(None, "Target.createTarget", json!({"url": "about:blank"}))?;
        let target = t["targetId"].as_str().ok_or("no target id")?.to_string();
        let s = b.call_on(
            None,
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        )?;
        b.session = s["sessionId"].as_str().ok_or("no session")?.to_string();
        for d in [
            "Runtime.enable",
            "Log.enable",
            "Page.enable",
            "Network.enable",
        ] {
            b.call(d, json!({}))?;
        }
        Ok(b)
    }

    fn call_on(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        let mut m = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            m["sessionId"] = json!(s);
        }
        self.ws.send(&m.to_string())?;
        loop {
            let text = self.ws.recv()?;
            let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            if v["id"].as_u64() == Some(id) {
                if let Some(e) = v.get("error") {
                    return Err(format!("{method}: {e}"));
                }
                return Ok(v["result"].clone());
            }
            if v.get("method").is_some() {
                self.events.push(v);
            }
        }
    }

    /// A protocol call on the page.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let s = self.session.clone();
        self.call_on(Some(&s), method, params)
    }

    /// Evaluates `expr` in the page (awaiting a promise) and returns its
    /// value; a thrown exception is an error.
    pub fn eval(&mut self, expr: &str) -> Result<Value, String> {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        )?;
        if let Some(e) = r.get("exceptionDetails") {
            return Err(format!("{expr}: {e}"));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Polls `expr` until it is truthy, for at most `timeout`.
    pub fn wait_for(&mut self, expr: &str, timeout: Duration) -> Result<Value, String> {
        let end = Instant::now() + timeout;
        loop {
            let v = self.eval(expr)?;
            if !(v.is_null() || v == json!(false) || v == json!(0)) {
                return Ok(v);
            }
            if Instant::now() > end {
                return Err(format!("timed out waiting for {expr}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Opens `file` in the page.
    pub fn open(&mut self, file: &Path) -> Result<(), String> {
        let url = format!(
            "file://{}",
            file.canonicalize().map_err(|e| e.to_string())?.display()
        );
        self.call("Page.navigate", json!({"url": url}))?;
        Ok(())
    }

    /// A PNG of the page as it is now.
    pub fn screenshot(&mut self, path: &Path) -> Result<(), String> {
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}))?;
        let data = decode_base64(r["data"].as_str().ok_or("no data")?)?;
        std::fs::write(path, data).map_err(|e| e.to_string())
    }

    /// Console errors, uncaught exceptions and error log entries so far.
    pub fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e["method"].as_str()? {
                "Runtime.exceptionThrown" => Some(e["params"]["exceptionDetails"].to_string()),
                "Runtime.consoleAPICalled" if e["params"]["type"] == "error" => {
                    Some(e["params"]["args"].to_string())
                }
                "Log.entryAdded" if e["params"]["entry"]["level"] == "error" => {
                    Some(e["params"]["entry"]["text"].to_string())
                }
                _ => None,
            })
            .collect()
    }

    /// URLs the page requested.
    pub fn requests(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str().map(str::to_string))
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
    let val = |c: u8| -> Result<u32, String> {
        Ok(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(format!("bad base64 byte {c}")),
        } as u32)
    };
    let b: Vec<u8> = s
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(b.len() * 3 / 4);
    for q in b.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in q.iter().enumerate() {
            n |= val(c)? << (18 - 6 * i);
        }
        for i in 0..q.len().saturating_sub(1) {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Ok(out)
}
