import Foundation
import Hummingbird
import NIOCore

/// The live map page and what it loads, on the operations port.
///
/// - `GET /`: the page (its HTML, CSS and script from the binary), on Leaflet;
/// - `GET /lib/leaflet/{file}`: Leaflet and its marker clusters, from the host's Debian packages (`libjs-leaflet`,
///   `libjs-leaflet.markercluster`: ``Settings/leafletDirectory``), served rather than copied into the repository;
/// - `GET /map/config`: the map's tiles (``Settings/tiles``) and their attribution, for the page;
/// - `GET /map/countries`: the country outlines it draws when no tiles are set (`country-outlines.json`, made by
///   `country-outlines`): a map with nothing from outside the service.
///
/// The page, its settings and the outlines need the device endpoints' access; the library files are public code and
/// go to any browser that opens the page.
public struct MapPage: Sendable {
    /// The page's map settings (`http.mapTiles`, `http.mapTilesAttribution`, `http.leafletDirectory`).
    public struct Settings: Sendable, Equatable {
        /// A tile URL template (`https://tile.example/{z}/{x}/{y}.png`); nil: the country outlines, offline.
        public var tiles: String?
        /// The credit the tile provider requires, shown on the map; needed with ``tiles``.
        public var tilesAttribution: String?
        /// Where Debian's libjs-leaflet and libjs-leaflet.markercluster put their files.
        public var leafletDirectory: String

        public init(
            tiles: String? = nil,
            tilesAttribution: String? = nil,
            leafletDirectory: String = "/usr/share/javascript/leaflet"
        ) {
            self.tiles = tiles
            self.tilesAttribution = tilesAttribution
            self.leafletDirectory = leafletDirectory
        }
    }

    /// The library files the page loads, by the name it asks for, with their content types.
    static let leafletFiles: [String: String] = [
        "leaflet.js": "text/javascript; charset=utf-8",
        "leaflet.css": "text/css; charset=utf-8",
        "leaflet.markercluster.js": "text/javascript; charset=utf-8",
        "MarkerCluster.css": "text/css; charset=utf-8",
        "MarkerCluster.Default.css": "text/css; charset=utf-8",
        "images/layers.png": "image/png",
        "images/layers-2x.png": "image/png",
        "images/marker-icon.png": "image/png",
        "images/marker-icon-2x.png": "image/png",
        "images/marker-shadow.png": "image/png",
    ]

    let access: DeviceEndpoints.Access
    /// Whether this process serves devices (a worker's queries), without which there is no page.
    let served: Bool
    let settings: Settings

    func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("/") { request, _ in
            if let refusal = access.refusal(request) {
                // A browser cannot send a bearer header when it opens a page: it gets a form that keeps the
                // token in the page's cookie instead.
                return refusal.status == .unauthorized ? Self.loginPage() : refusal
            }
            guard served, let page = Self.page else { return DeviceEndpoints.notServed() }
            return DeviceEndpoints.bytes(page, type: "text/html; charset=utf-8", caching: "no-store")
        }
        router.get("map/countries") { request, _ in
            if let refusal = access.refusal(request) { return refusal }
            guard let outlines = Self.outlines else { return DeviceEndpoints.notServed() }
            return DeviceEndpoints.bytes(outlines, type: "application/json", caching: "max-age=86400")
        }
        router.get("map/config") { request, _ in
            if let refusal = access.refusal(request) { return refusal }
            let body: [String: Any] = [
                "tiles": settings.tiles ?? NSNull(), "attribution": settings.tilesAttribution ?? NSNull(),
            ]
            let json =
                (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes]))
                ?? Data()
            return DeviceEndpoints.bytes(Array(json), type: "application/json", caching: "no-store")
        }
        router.get("lib/leaflet/:file") { _, context in
            library(context.parameters.get("file") ?? "")
        }
        router.get("lib/leaflet/images/:file") { _, context in
            library("images/" + (context.parameters.get("file") ?? ""))
        }
    }

    /// A library file the page loads, read from the Debian package's directory; 404 saying what to install.
    private func library(_ name: String) -> Response {
        guard access.enabled, let type = Self.leafletFiles[name] else {
            return DeviceEndpoints.error(.notFound, "no such file")
        }
        let path = settings.leafletDirectory + "/" + name
        guard let bytes = FileManager.default.contents(atPath: path) else {
            return DeviceEndpoints.error(
                .notFound,
                "\(path) is missing: install Debian's libjs-leaflet and libjs-leaflet.markercluster "
                    + "(scripts/setup.sh does), or set http.leafletDirectory"
            )
        }
        return DeviceEndpoints.bytes(Array(bytes), type: type, caching: "max-age=86400")
    }

    static let page = resource("map", "html")
    static let outlines = resource("country-outlines", "json")

    private static func resource(_ name: String, _ type: String) -> [UInt8]? {
        Bundle.module.url(forResource: name, withExtension: type).flatMap { try? Data(contentsOf: $0) }.map(Array.init)
    }

    /// The page a browser gets without the token: a form that stores it in the `geoworker_token` cookie.
    private static func loginPage() -> Response {
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>geoworker</title></head>
            <body style="font: 14px system-ui, sans-serif"><form id="login" style="max-width: 360px; margin: 15vh auto">
            <h1>geoworker</h1><p>This page shows device positions and needs the service's token (http.token).</p>
            <input id="token" type="password" autocomplete="off" style="width: 100%"><p><button>Open</button></p></form>
            <script>document.getElementById("login").onsubmit = (submit) => { submit.preventDefault();
            document.cookie = "geoworker_token=" + encodeURIComponent(document.getElementById("token").value)
              + "; path=/; SameSite=Strict"; location.reload(); };</script></body></html>
            """
        return Response(
            status: .unauthorized,
            headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html))
        )
    }
}
