//! A real headless Chromium, driven over WebDriver (chromedriver), for testing pages as a person uses them.
//!
//! Each [`Browser`] starts its own chromedriver on a free port and one Chromium session with a fresh profile;
//! both end when it is dropped. Without Chromium (Debian packages `chromium` and `chromium-driver`, which
//! `scripts/services.sh` installs) a browser test is skipped with a note, except under `CI=true`, where it fails.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The width and height of the desktop and the phone windows: a common laptop width, and the narrowest phone in
/// common use (375 px, the width every page must fit without scrolling sideways).
pub const DESKTOP: (u32, u32) = (1280, 900);
pub const PHONE: (u32, u32) = (375, 812);

pub struct Browser {
    pub client: Client,
    pub base: String,
    driver: tokio::process::Child,
    profile: PathBuf,
    /// The page's text just before the last click, until a `wait_for_text` reads it: a text that was already there
    /// proves nothing about the answer to the click (the wait would end at once, on the old page).
    text_before_click: std::sync::Mutex<Option<String>>,
    /// The root element of the page that the last click was on (see `wait_for_new_page`).
    document_before_click: std::sync::Mutex<Option<Element>>,
}

impl Browser {
    /// A browser pointed at `base` (the server's address), or `None` when Chromium is missing outside CI.
    pub async fn start(base: &str) -> Option<Browser> {
        Self::start_sized(base, DESKTOP).await
    }

    /// A browser with JavaScript turned off, to prove pages work without it.
    pub async fn start_without_javascript(base: &str) -> Option<Browser> {
        Self::launch(base, DESKTOP, false).await
    }

    pub async fn start_sized(base: &str, size: (u32, u32)) -> Option<Browser> {
        Self::launch(base, size, true).await
    }

    async fn launch(base: &str, (width, height): (u32, u32), javascript: bool) -> Option<Browser> {
        if !std::path::Path::new(CHROMIUM).exists() || !std::path::Path::new(CHROMEDRIVER).exists() {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("Chromium and chromedriver are required under CI=true (bash scripts/services.sh installs them)");
            }
            eprintln!("skipping: {CHROMIUM} or {CHROMEDRIVER} is missing (bash scripts/services.sh installs them)");
            return None;
        }
        let port = free_port();
        let driver = tokio::process::Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver starts");
        let profile = std::env::temp_dir().join(format!("frontdesk-chromium-{}", uuid::Uuid::now_v7().simple()));
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": CHROMIUM,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-default-apps", "--no-first-run", "--disable-quic", "--hide-scrollbars",
                    format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.display()),
                ],
                "prefs": { "profile.managed_default_content_settings.javascript": if javascript { 1 } else { 2 } },
            }),
        );
        // Chromium's windows are at least 500 pixels wide: narrower screens are emulated, as a phone's.
        if width < 500 {
            if let Some(Value::Object(options)) = caps.get_mut("goog:chromeOptions") {
                options.insert(
                    "mobileEmulation".into(),
                    json!({"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2.0, "touch": true}}),
                );
            }
        }
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let url = format!("http://127.0.0.1:{port}");
        let mut last_error = None;
        for _ in 0..50 {
            match ClientBuilder::new(connector.clone()).capabilities(caps.clone()).connect(&url).await {
                Ok(client) => {
                    let base = base.trim_end_matches('/').to_string();
                    let (text_before_click, document_before_click) = Default::default();
                    return Some(Browser { client, base, driver, profile, text_before_click, document_before_click });
                }
                Err(err) => {
                    last_error = Some(err);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        panic!("could not start a Chromium session: {last_error:?}");
    }

    /// The bytes at `path` (a download), fetched with the browser's session cookies.
    pub async fn fetch_bytes(&self, path: &str) -> Vec<u8> {
        let cookies = self.client.get_all_cookies().await.expect("the browser's cookies");
        let header = cookies.iter().map(|c| format!("{}={}", c.name(), c.value())).collect::<Vec<_>>().join("; ");
        let answer = reqwest::Client::new()
            .get(format!("{}{path}", self.base))
            .header("cookie", header)
            .send()
            .await
            .expect("the download");
        assert!(answer.status().is_success(), "{path}: {}", answer.status());
        answer.bytes().await.expect("its bytes").to_vec()
    }

    pub async fn goto(&self, path: &str) {
        self.text_before_click.lock().expect("text before click").take();
        self.client.goto(&format!("{}{path}", self.base)).await.expect("navigation");
    }

    /// The path (and query) of the page shown now.
    pub async fn path(&self) -> String {
        let url = self.client.current_url().await.expect("current url");
        match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        }
    }

    pub async fn find(&self, css: &str) -> Element {
        self.client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(css)).await.unwrap_or_else(|e| {
            panic!("no element {css:?}: {e}");
        })
    }

    pub async fn find_all(&self, css: &str) -> Vec<Element> {
        self.client.find_all(Locator::Css(css)).await.expect("find_all")
    }

    pub async fn text(&self, css: &str) -> String {
        self.find(css).await.text().await.expect("text")
    }

    /// The whole page's visible text.
    pub async fn page_text(&self) -> String {
        // Read by script rather than through an element handle, which goes stale while a page is replaced.
        match self.client.execute("return document.body ? document.body.innerText : '';", vec![]).await {
            Ok(Value::String(text)) => text,
            // With JavaScript off, through the element (which may go stale while a page loads: then nothing yet).
            _ => match self.client.find(Locator::Css("body")).await {
                Ok(body) => body.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            },
        }
    }

    /// Types `value` into the field, replacing what it held. A field found while its page was being replaced (a form
    /// answered with a new page, an htmx swap) goes stale under the fingers: it is found again and typed afresh.
    pub async fn fill(&self, css: &str, value: &str) {
        use fantoccini::error::{CmdError, ErrorStatus};
        let mut stale = 0;
        loop {
            let field = self.find(css).await;
            let typed = match field.clear().await {
                Ok(()) => field.send_keys(value).await,
                Err(err) => Err(err),
            };
            match typed {
                Ok(()) => return,
                Err(CmdError::Standard(err)) if err.error == ErrorStatus::StaleElementReference && stale < 5 => {
                    stale += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(err) => panic!("typing into {css:?}: {err}"),
            }
        }
    }

    /// Sets a field's value directly (date inputs take their value in the browser's locale format when typed).
    pub async fn set_value(&self, css: &str, value: &str) {
        let field = self.find(css).await;
        self.client
            .execute(
                "arguments[0].value = arguments[1];",
                vec![serde_json::to_value(&field).expect("element"), json!(value)],
            )
            .await
            .expect("set value");
    }

    pub async fn select(&self, css: &str, value: &str) {
        let select = self.find(css).await;
        select.select_by_value(value).await.expect("select option");
    }

    pub async fn click(&self, css: &str) {
        let element = self.find(css).await;
        self.remember_text_before_click().await;
        element.click().await.expect("click");
    }

    /// Clicks the button or link whose text contains `text`.
    pub async fn click_text(&self, selector: &str, text: &str) {
        for element in self.find_all(selector).await {
            if element.text().await.unwrap_or_default().contains(text) {
                self.remember_text_before_click().await;
                element.click().await.expect("click");
                return;
            }
        }
        panic!("no {selector} with text {text:?} on {}", self.path().await);
    }

    /// Signs in on `/sign-in` and waits for the signed-in page.
    pub async fn sign_in(&self, email: &str, password: &str) {
        self.goto("/sign-in").await;
        self.fill("#email", email).await;
        self.fill("#password", password).await;
        self.click("button[type=submit]").await;
        self.wait_for_text("Sign out").await;
    }

    /// Notes the page's text, and its document, just before a click (see `wait_for_text`, `wait_for_new_page`).
    async fn remember_text_before_click(&self) {
        let text = self.page_text().await;
        *self.text_before_click.lock().expect("text before click") = Some(text);
        let document = self.client.find(Locator::Css("html")).await.ok();
        *self.document_before_click.lock().expect("document before click") = document;
    }

    /// Waits until the click before it has replaced the page: for links and forms whose answer shows texts that the
    /// page before it showed too (a menu's heading, a filtered list's rows). Works with JavaScript off: the old
    /// document's root element goes stale once the new page is there.
    pub async fn wait_for_new_page(&self) {
        use fantoccini::error::{CmdError, ErrorStatus};
        self.text_before_click.lock().expect("text before click").take();
        let old = self.document_before_click.lock().expect("document before click").take();
        let Some(old) = old else { panic!("wait_for_new_page without a click before it") };
        for _ in 0..100 {
            match old.tag_name().await {
                Err(CmdError::Standard(err))
                    if matches!(err.error, ErrorStatus::StaleElementReference | ErrorStatus::NoSuchElement) =>
                {
                    return
                }
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
        panic!("the click on {} did not open a new page", self.path().await);
    }

    /// Waits until the page's text contains `needle`. After a click, `needle` must be a text that the page did not
    /// show before it: otherwise the wait ends at once, on the old page, and the test races the answer.
    pub async fn wait_for_text(&self, needle: &str) {
        let before = self.text_before_click.lock().expect("text before click").take();
        if before.is_some_and(|text| text.contains(needle)) {
            panic!("{needle:?} was on the page before the click: wait for a text that only the answer shows");
        }
        for _ in 0..100 {
            if self.page_text().await.contains(needle) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the page {} never showed {needle:?}; it shows:\n{}", self.path().await, self.page_text().await);
    }

    /// Accepts the browser's confirmation dialog (destructive actions ask first).
    pub async fn accept_dialog(&self) {
        for _ in 0..50 {
            if self.client.accept_alert().await.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no confirmation dialog appeared");
    }

    /// Saves a screenshot of the page to `docs/screenshots/<name>.png`.
    pub async fn screenshot(&self, name: &str) {
        let png = self.client.screenshot().await.expect("screenshot");
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot folder");
        std::fs::write(dir.join(format!("{name}.png")), png).expect("screenshot written");
    }

    /// Runs axe-core (vendored in `tests/assets`) on the page and answers every violation it finds, of any impact.
    pub async fn accessibility_violations(&self) -> Vec<String> {
        const AXE: &str = include_str!("../../assets/axe.min.js");
        self.client.execute(&format!("{AXE}\nreturn true;"), vec![]).await.expect("axe loads");
        let result = self
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, { resultTypes: ['violations'] })
                    .then(r => done(r.violations
                        .map(v => v.id + ' (' + v.impact + '): ' + v.help + ' at ' +
                             v.nodes.map(n => n.target.join(' ')).slice(0, 3).join(' | '))))
                    .catch(e => done(['axe failed: ' + e]));",
                vec![],
            )
            .await
            .expect("axe runs");
        match result {
            Value::Array(items) => items.into_iter().map(|v| v.as_str().unwrap_or_default().to_string()).collect(),
            other => vec![format!("unexpected axe answer {other}")],
        }
    }

    /// Asserts that axe-core finds no violation on the page.
    pub async fn assert_accessible(&self, what: &str) {
        let violations = self.accessibility_violations().await;
        assert!(violations.is_empty(), "accessibility violations on {what}:\n{}", violations.join("\n"));
    }

    /// Asserts that the page does not scroll sideways at this window's width (`scrollWidth == clientWidth` of the
    /// document), naming the elements that stick out when it does.
    pub async fn assert_fits(&self, what: &str) {
        const MEASURE: &str = r#"
            const root = document.documentElement;
            const width = root.clientWidth;
            if (root.scrollWidth === width) return null;
            // Inside a scroll container that itself fits, an element may be wider than the window: not the cause
            // (unless it is positioned out of the container's flow, as screen-reader-only text can be).
            const clipped = el => {
                if (['absolute', 'fixed'].includes(getComputedStyle(el).position)) return false;
                for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
                    if (getComputedStyle(a).overflowX !== 'visible' && a.getBoundingClientRect().right <= width + 0.5)
                        return true;
                }
                return false;
            };
            const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
                (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '') +
                ' "' + (el.textContent || '').trim().slice(0, 40) + '"';
            const out = [...document.querySelectorAll('body *')]
                .filter(el => el.getBoundingClientRect().right > width + 0.5 && !clipped(el))
                .filter((el, _, all) => !all.some(other => other !== el && el.contains(other)))
                .slice(0, 8)
                .map(el => name(el) + ' ends at ' + Math.round(el.getBoundingClientRect().right));
            return 'scrollWidth ' + root.scrollWidth + ' > clientWidth ' + width + '; sticking out: ' + out.join('; ');
        "#;
        let answer = self.client.execute(MEASURE, vec![]).await.expect("measures");
        assert!(answer.is_null(), "{what} scrolls sideways on {}: {answer}", self.path().await);
    }

    /// Both checks every page must pass: axe-core finds nothing, and the page fits the window's width.
    pub async fn assert_page_ok(&self, what: &str) {
        self.assert_fits(what).await;
        self.assert_accessible(what).await;
    }

    /// Asserts that every visible element matching `css` can be reached where it is and reads in full: with the page
    /// scrolled to it vertically (and nothing scrolled sideways), it lies within the window's width and within every
    /// scroll container around it, nothing covers its middle, and its content is not cut off.
    pub async fn assert_in_reach(&self, css: &str, what: &str) {
        const REACH: &str = r#"
            const width = document.documentElement.clientWidth;
            const out = [];
            for (const el of document.querySelectorAll(arguments[0])) {
                if (!el.getClientRects().length) continue;
                window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - window.innerHeight / 2);
                const r = el.getBoundingClientRect();
                const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
                const cut = el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
                let hidden = false;
                for (let a = el.parentElement; a; a = a.parentElement) {
                    if (getComputedStyle(a).overflowX === 'visible') continue;
                    const box = a.getBoundingClientRect();
                    if (r.left < box.left - 0.5 || r.right > box.right + 0.5) hidden = true;
                }
                if (r.left < 0 || r.right > width + 0.5 || !hit || !el.contains(hit) || cut || hidden)
                    out.push((el.textContent || '').trim().slice(0, 40) + ' at ' + Math.round(r.left) + '..' +
                             Math.round(r.right) + ' of ' + width);
            }
            window.scrollTo(0, 0);
            return out;
        "#;
        let answer = self.client.execute(REACH, vec![json!(css)]).await.expect("measures");
        let out = answer.as_array().cloned().unwrap_or_default();
        assert!(out.is_empty(), "out of reach on {what} ({css}): {out:?}");
    }

    /// Asserts that every visible element matching `css` is at least `pixels` tall (a finger's width on a phone).
    pub async fn assert_min_height(&self, css: &str, pixels: f64, what: &str) {
        const HEIGHTS: &str = r#"
            return [...document.querySelectorAll(arguments[0])]
                .filter(el => el.getClientRects().length)
                .map(el => [el.outerHTML.slice(0, 80), el.getBoundingClientRect().height]);
        "#;
        let answer = self.client.execute(HEIGHTS, vec![json!(css)]).await.expect("measures");
        let short: Vec<String> = answer
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter(|pair| pair[1].as_f64().unwrap_or(0.0) < pixels - 0.01)
            .map(|pair| format!("{} is {:.1} px", pair[0], pair[1].as_f64().unwrap_or(0.0)))
            .collect();
        assert!(short.is_empty(), "shorter than {pixels} px on {what}: {short:#?}");
    }

    /// Asserts that every visible element matching `css` has text of at least 12 px, which Lighthouse counts as
    /// legible.
    pub async fn assert_legible(&self, css: &str, what: &str) {
        const SIZES: &str = r#"
            return [...document.querySelectorAll(arguments[0])]
                .filter(el => el.getClientRects().length)
                .map(el => [el.outerHTML.slice(0, 80), parseFloat(getComputedStyle(el).fontSize)]);
        "#;
        let answer = self.client.execute(SIZES, vec![json!(css)]).await.expect("measures");
        let sizes = answer.as_array().cloned().unwrap_or_default();
        assert!(!sizes.is_empty(), "nothing matches {css} on {what}");
        let small: Vec<String> = sizes
            .iter()
            .filter(|pair| pair[1].as_f64().unwrap_or(0.0) < 12.0 - 0.01)
            .map(|pair| format!("{} is {:.1} px", pair[0], pair[1].as_f64().unwrap_or(0.0)))
            .collect();
        assert!(small.is_empty(), "text below 12 px on {what}: {small:#?}");
    }

    /// Asserts that every visible `select` matching `css` shows its chosen option's text whole: the text, in the
    /// select's own font, fits between its padding and the drop-down arrow.
    pub async fn assert_choice_shown(&self, css: &str, what: &str) {
        const WIDTHS: &str = r#"
            const canvas = document.createElement('canvas').getContext('2d');
            return [...document.querySelectorAll(arguments[0])]
                .filter(el => el.getClientRects().length)
                .map(el => {
                    const style = getComputedStyle(el);
                    canvas.font = style.font;
                    const text = el.options[el.selectedIndex]?.text ?? '';
                    const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
                    return [text, canvas.measureText(text).width, room];
                });
        "#;
        // Chromium draws the arrow in the select's right padding and about 16 px more.
        const ARROW: f64 = 16.0;
        let answer = self.client.execute(WIDTHS, vec![json!(css)]).await.expect("measures");
        let selects = answer.as_array().cloned().unwrap_or_default();
        assert!(!selects.is_empty(), "nothing matches {css} on {what}");
        for s in selects {
            let (text, width, room) = (s[0].as_str().unwrap_or_default(), s[1].as_f64(), s[2].as_f64());
            let (Some(width), Some(room)) = (width, room) else { panic!("no widths for {css}: {s}") };
            assert!(width + ARROW <= room, "{what} cuts \"{text}\" ({width:.0} px of text in {room:.0} px)");
        }
    }

    /// Emulates forced colours (as Windows' contrast themes force them), or stops.
    pub async fn emulate_forced_colors(&self, on: bool) {
        let value = if on { "active" } else { "none" };
        let features = json!({"features": [{"name": "forced-colors", "value": value}]});
        self.client
            .issue_cmd(Cdp { command: "Emulation.setEmulatedMedia", params: features })
            .await
            .expect("emulates forced colours");
    }

    /// Presses Tab `presses` times, and asserts that every element that takes the keyboard's focus and shows it
    /// (`:focus-visible`) has a ring at least 2 px wide with at least 3:1 contrast against what it is drawn on.
    pub async fn assert_focus_rings(&self, presses: usize, what: &str) {
        const RING: &str = r#"
const el = document.activeElement;
if (!el || el === document.body) return null;
const cs = getComputedStyle(el);
const rgb = c => { const m = c.match(/rgba?\(([^)]*)\)/); if (!m) return null; const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number); return p.length === 3 ? p.concat([1]) : p; };
const lum = ([r, g, b]) => { const f = v => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
const inset = parseFloat(cs.outlineOffset) < 0;
let back = [255, 255, 255, 1];
for (let a = inset ? el : el.parentElement; a; a = a.parentElement) {
  const c = rgb(getComputedStyle(a).backgroundColor);
  if (c && c[3] > 0) { back = c; break; }
}
const ring = rgb(cs.outlineColor);
const width = cs.outlineStyle === 'none' ? 0 : parseFloat(cs.outlineWidth);
let ratio = 0;
if (ring && width > 0) { const [l1, l2] = [lum(ring), lum(back)].sort((x, y) => y - x); ratio = (l1 + 0.05) / (l2 + 0.05); }
return { what: el.tagName.toLowerCase() + ' "' + (el.textContent || el.value || '').trim().slice(0, 30) + '"', width, ratio: Math.round(ratio * 100) / 100, ring: cs.outlineColor, back: back.join(','), visible: el.matches(':focus-visible') };
"#;
        use fantoccini::actions::{InputSource, KeyAction, KeyActions};
        let mut seen = Vec::new();
        for _ in 0..presses {
            let tab = KeyActions::new("keyboard".into())
                .then(KeyAction::Down { value: fantoccini::key::Key::Tab.into() })
                .then(KeyAction::Up { value: fantoccini::key::Key::Tab.into() });
            self.client.perform_actions(tab).await.expect("Tab");
            let ring = self.client.execute(RING, vec![]).await.expect("measures");
            if ring["visible"] == json!(true) {
                let (width, ratio) = (ring["width"].as_f64().unwrap_or(0.0), ring["ratio"].as_f64().unwrap_or(0.0));
                assert!(width >= 2.0 && ratio >= 3.0, "a focus ring of {width} px at {ratio}:1 on {what}: {ring}");
                seen.push(ring["what"].to_string());
            }
        }
        assert!(seen.len() * 2 > presses, "most of {presses} Tab presses on {what} showed a ring: {seen:?}");
    }

    pub async fn close(self) {
        let Browser { client, mut driver, profile, .. } = self;
        let _ = client.close().await;
        let _ = driver.kill().await;
        let _ = std::fs::remove_dir_all(profile);
    }
}

/// A Chrome DevTools Protocol command, sent through chromedriver's `goog/cdp/execute`.
#[derive(Debug)]
struct Cdp {
    command: &'static str,
    params: Value,
}

impl fantoccini::wd::WebDriverCompatibleCommand for Cdp {
    fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/goog/cdp/execute", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (axum::http::Method, Option<String>) {
        (axum::http::Method::POST, Some(json!({"cmd": self.command, "params": self.params}).to_string()))
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}
