// swift-tools-version: 6.0
import Foundation
import PackageDescription

/// The root package's identity: the name of the directory it was cloned into.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// Release-mode benchmarks of ChatSync against the same work done with the raw SQLite
// C API. Run: swift run -c release --package-path Benchmarks chatsync-bench [--quick] (--help lists every option)
let package = Package(
    name: "ChatSyncBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .executableTarget(
            name: "chatsync-bench",
            dependencies: [
                .product(name: "ChatSync", package: root),
                .product(name: "ChatSyncTesting", package: root),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
