// swift-tools-version: 6.0
import Foundation
import PackageDescription

/// The root package's identity: the name of the directory it was cloned into.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// The reference server, its client, the demo and the loopback integration tests.
// A package of its own, so that library users never download a web server.
let package = Package(
    name: "ChatSyncSamples",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "ChatServer", targets: ["ChatServer"]),
        .library(name: "ChatServerClient", targets: ["ChatServerClient"]),
        .executable(name: "chat-server", targets: ["chat-server"]),
        .executable(name: "chat-demo", targets: ["chat-demo"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .target(
            name: "ChatServer",
            dependencies: [
                .product(name: "ChatSync", package: root),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "ChatServerClient",
            dependencies: [
                .product(name: "ChatSync", package: root),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "chat-server",
            dependencies: [
                "ChatServer", .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "chat-demo",
            dependencies: [
                "ChatServer", "ChatServerClient", .product(name: "ChatSync", package: root),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The crash-kill soak's victim (see Tests/SamplesTests/CrashKillTests.swift); the
        // test target depends on it so that it is built before the tests run.
        .executableTarget(
            name: "crash-sender",
            dependencies: [
                "ChatServerClient", .product(name: "ChatSync", package: root), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The test target also depends on chat-server and chat-demo, so that
        // CommandLineTests can `@testable import` their commands and parse arguments in-process.
        .testTarget(
            name: "SamplesTests",
            dependencies: [
                "ChatServer", "ChatServerClient", "crash-sender", "chat-server", "chat-demo",
                .product(name: "ChatSync", package: root),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ChatSyncTesting", package: root),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
