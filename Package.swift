// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "ChatSync",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "ChatSync", targets: ["ChatSync"]),
        .library(name: "ChatSyncTesting", targets: ["ChatSyncTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
        // Only for `swift package generate-documentation`: a command plugin, linked into no target.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "ChatSync",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "ChatSyncTesting",
            dependencies: ["ChatSync"]
        ),
        .testTarget(
            name: "ChatSyncTests",
            dependencies: [
                "ChatSync",
                "ChatSyncTesting",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
