// swift-tools-version: 6.0
import Foundation
import PackageDescription

/// The root package's identity: the name of the directory it was cloned into.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// ChatSync against a Matrix homeserver. A package of its own, so that library users who
// do not use Matrix never download an HTTP client.
let package = Package(
    name: "ChatSyncMatrix",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "ChatSyncMatrix", targets: ["ChatSyncMatrix"])
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .target(
            name: "ChatSyncMatrix",
            dependencies: [
                .product(name: "ChatSync", package: root),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // A local Synapse for the tests and the demo: not a product.
        .target(
            name: "SynapseHarness",
            dependencies: [
                "ChatSyncMatrix", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "matrix-demo",
            dependencies: [
                "ChatSyncMatrix", "SynapseHarness", .product(name: "ChatSync", package: root),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ChatSyncMatrixTests",
            dependencies: [
                "ChatSyncMatrix", "SynapseHarness", .product(name: "ChatSync", package: root),
                .product(name: "ChatSyncTesting", package: root), .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
