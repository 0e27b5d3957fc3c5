import Foundation
import TestSupport
import Testing

/// A headless Chromium driven through chromedriver's W3C WebDriver protocol (JSON over HTTP): enough to open
/// a page, read and click its elements, type, and take a screenshot, as a user's browser would.
final class WebDriver: @unchecked Sendable {
    // @unchecked: the session id is set once in `start`, before the driver is shared.
    private let driver: BackgroundProcess
    private let base: URL
    private var session = ""

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts chromedriver on a free port and a headless Chromium session with a 1280 x 800 window.
    static func start() async throws -> WebDriver {
        let port = try freeLocalPort()
        let driver = try BackgroundProcess("/usr/bin/env", ["chromedriver", "--port=\(port)"])
        let web = WebDriver(driver: driver, base: URL(string: "http://127.0.0.1:\(port)")!)
        var budget = WaitBudget(.seconds(30), lookingEvery: .milliseconds(100))
        while true {
            do {
                _ = try await web.call("GET", "status")
                break
            } catch {
                guard budget.allowsAnotherLook(), driver.isRunning else {
                    throw Failure(description: "chromedriver did not start (\(error)): \(driver.errors.suffix(2000))")
                }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": [
                        "binary": "/usr/bin/chromium",
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            "--window-size=1280,800",
                        ],
                    ],
                ]
            ]
        ]
        let answer = try await web.call("POST", "session", capabilities)
        guard let id = (answer as? [String: Any])?["sessionId"] as? String else {
            throw Failure(description: "no session: \(String(describing: answer))")
        }
        web.session = id
        return web
    }

    private init(driver: BackgroundProcess, base: URL) {
        self.driver = driver
        self.base = base
    }

    deinit { driver.send(SIGTERM) }

    /// Ends the browser session and chromedriver.
    func quit() async {
        _ = try? await call("DELETE", "session/\(session)")
        driver.send(SIGTERM)
    }

    func open(_ url: String) async throws {
        _ = try await call("POST", "session/\(session)/url", ["url": url])
    }

    /// The elements matching a CSS selector, by their WebDriver ids.
    func elements(_ selector: String) async throws -> [String] {
        let answer = try await call(
            "POST",
            "session/\(session)/elements",
            ["using": "css selector", "value": selector]
        )
        return (answer as? [[String: Any]] ?? []).compactMap { $0.values.first as? String }
    }

    /// The rendered text of the first element matching `selector`, or nil when there is none.
    func text(_ selector: String) async throws -> String? {
        try await texts(selector).first
    }

    /// The rendered texts of every element matching `selector`, read in one step in the page (the page
    /// re-renders its lists as events arrive, so elements found first and read later may be gone).
    func texts(_ selector: String) async throws -> [String] {
        let answer = try await call(
            "POST",
            "session/\(session)/execute/sync",
            [
                "script": "return Array.from(document.querySelectorAll(arguments[0])).map((e) => e.innerText)",
                "args": [selector],
            ]
        )
        return answer as? [String] ?? []
    }

    /// Clicks the first element matching `selector` as a user would (a real pointer click), finding it again
    /// if the page re-rendered it in between.
    func click(_ selector: String) async throws {
        for attempt in 1...5 {
            guard let element = try await elements(selector).first else {
                throw Failure(description: "nothing matches \(selector)")
            }
            do {
                _ = try await call("POST", "session/\(session)/element/\(element)/click", [:])
                return
            } catch let failure as Failure where failure.description.contains("stale element") && attempt < 5 {
                continue
            }
        }
    }

    /// Types `text` into the first element matching `selector`; "\u{E007}" is the Enter key.
    func type(_ text: String, into selector: String) async throws {
        guard let element = try await elements(selector).first else {
            throw Failure(description: "nothing matches \(selector)")
        }
        _ = try await call("POST", "session/\(session)/element/\(element)/value", ["text": text])
    }

    /// A PNG of the window.
    func screenshot() async throws -> Data {
        guard let base64 = try await call("GET", "session/\(session)/screenshot") as? String,
            let data = Data(base64Encoded: base64)
        else { throw Failure(description: "no screenshot") }
        return data
    }

    /// Polls until `condition` holds, failing with `what` after `timeout`.
    func waitUntil(
        _ what: String,
        timeout: Duration = .seconds(30),
        _ condition: () async throws -> Bool
    ) async throws {
        var budget = WaitBudget(timeout, lookingEvery: .milliseconds(100))
        while budget.allowsAnotherLook() {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure(description: "timed out waiting until \(what)")
    }

    /// One WebDriver command; returns its `value`.
    ///
    /// Through curl: chromedriver writes its headers without a space after the colon, which FoundationNetworking's
    /// URLSession refuses ("Failed writing header").
    private func call(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> Any? {
        var arguments = ["curl", "-s", "-m", "60", "-X", method, "-w", "\n%{http_code}"]
        var input: String?
        if let body {
            arguments += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
            input = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        }
        arguments.append(base.appendingPathComponent(path).absoluteString)
        let result = try await ChildProcess.run("/usr/bin/env", arguments, input: input)
        guard let split = result.output.lastIndex(of: "\n") else {
            throw Failure(description: "\(method) \(path): no answer (\(result.errors))")
        }
        let data = Data(result.output[..<split].utf8)
        guard result.output[result.output.index(after: split)...] == "200" else {
            throw Failure(description: "\(method) \(path): \(result.output.prefix(500))")
        }
        let object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as? [String: Any]
        return object?["value"]
    }
}
