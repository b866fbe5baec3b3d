import Basics
import Foundation
import Images
import XCTest
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import Evaluation

final class ConfusionPictureTests: XCTestCase {
    static let pennAction = ["baseball_pitch", "baseball_swing", "bench_press", "bowl", "clean_and_jerk",
                             "golf_swing", "jump_rope", "jumping_jacks", "pullup", "pushup", "situp", "squat",
                             "strum_guitar", "tennis_forehand", "tennis_serve"]

    /// k classes, class c with 3 + c samples, the first of each predicted as the next class.
    static func metrics(_ labels: [String]) -> ClassificationMetrics {
        var truth: [Int] = [], predicted: [Int] = []
        for c in labels.indices {
            for s in 0..<(3 + c) { truth.append(c); predicted.append(s == 0 ? (c + 1) % labels.count : c) }
        }
        return ClassificationMetrics(labels: labels, truth: truth, predicted: predicted)
    }

    func testRendersAndWritesPNG() throws {
        let small = Self.metrics(["walk", "run"])
        let large = Self.metrics(Self.pennAction)
        let a = ConfusionPicture.render(small, title: "Confusion (clips)")
        let b = ConfusionPicture.render(large, title: "Confusion (clips)")
        XCTAssertGreaterThan(b.width, a.width)
        XCTAssertGreaterThan(b.height, a.height)

        // In the 15-class picture row 5 holds 7/8 on the diagonal, 1/8 at column 6 and 0 at
        // column 9. Read 3 px inside each cell's top-left corner (clear of the centred text).
        let L = ConfusionPicture.Layout(large, title: "Confusion (clips)")
        func corner(_ i: Int, _ j: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
            b.pixel(L.gridX + j * L.cell + 3, L.gridY + i * L.cell + 3)
        }
        let diag = corner(5, 5), empty = corner(5, 9)
        XCTAssertEqual(empty.r, 255); XCTAssertEqual(empty.g, 255); XCTAssertEqual(empty.b, 255)
        XCTAssertLessThan(Int(diag.r) + Int(diag.g) + Int(diag.b), 400)      // dark
        XCTAssertGreaterThan(Int(diag.b) - Int(diag.r), 80)                   // and blue
        let offDiag = corner(5, 6)                                            // 1/8: pale blue
        XCTAssertGreaterThan(Int(offDiag.r), Int(diag.r))
        XCTAssertLessThan(Int(offDiag.r), 255)

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-eval-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for (name, img) in [("2.png", a), ("15.png", b)] {
            let path = dir.appendingPathComponent(name).path
            try writePNG(img, to: path)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            XCTAssertEqual(Array(bytes.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], name)
        }
        if let keep = ProcessInfo.processInfo.environment["POSEACT_KEEP_PICTURES"] {   // for looking at it
            try writePNG(b, to: keep + "/confusion-15.png")
            try writePNG(a, to: keep + "/confusion-2.png")
        }
    }

    func testNoClasses() {
        let img = ConfusionPicture.render(ClassificationMetrics(labels: [], truth: [], predicted: []), title: "empty")
        XCTAssertGreaterThan(img.width * img.height, 0)
    }

    func testColourScale() {
        XCTAssertEqual(ConfusionTable.colour(share: 0), .white)
        XCTAssertEqual(ConfusionTable.colour(share: 1), ConfusionTable.fullColour)
    }
}

final class LearningCurvesTests: XCTestCase {
    static let history: [EpochRecord] = (1...12).map { e in
        let x = Double(e)
        return EpochRecord(epoch: e, trainLoss: 2 / x, trainAccuracy: 1 - 0.5 / x,
                           validationLoss: e == 4 ? nil : 2.2 / x + 0.01 * x,
                           validationAccuracy: e == 4 ? nil : min(0.9, 1 - 0.6 / x) - (e > 9 ? 0.05 : 0),
                           learningRate: 0.001, seconds: 1.5)
    }

    func testBestEpoch() {
        // Validation accuracy climbs to the 0.9 cap at epoch 6 and stays there until 9; among
        // the tied epochs 6...9 the lowest validation loss (2.2/x + 0.01x, falling until ~15) is at 9.
        XCTAssertEqual(LearningCurves.bestEpoch(Self.history), 9)
        XCTAssertNil(LearningCurves.bestEpoch([EpochRecord(epoch: 1, trainLoss: 1, trainAccuracy: 0.5, learningRate: 0.1, seconds: 1)]))
    }

    func testSVGIsWellFormedXML() throws {
        let svg = LearningCurves.svg(Self.history, title: "penn <action> & co")
        XCTAssertTrue(svg.hasPrefix("<svg"))
        #if canImport(FoundationXML) || os(macOS)
        let doc = try XMLDocument(xmlString: svg)
        let root = try XCTUnwrap(doc.rootElement())
        XCTAssertEqual(root.name, "svg")
        // Two panels × (train, validation split in two by the missing epoch 4) = 6 polylines.
        // (Walked by hand: XPath names would need the SVG namespace.)
        func all(_ name: String, in e: XMLElement) -> [XMLElement] {
            (e.localName == name ? [e] : []) + (e.children ?? []).compactMap { $0 as? XMLElement }.flatMap { all(name, in: $0) }
        }
        XCTAssertEqual(all("polyline", in: root).count, 6)
        let texts = all("text", in: root).compactMap(\.stringValue)
        XCTAssertTrue(texts.contains("penn <action> & co"))
        XCTAssertEqual(texts.filter { $0 == "best: 9" }.count, 2)
        XCTAssertTrue(texts.contains("Loss") && texts.contains("Accuracy") && texts.contains("100%"))
        #endif
        if let keep = ProcessInfo.processInfo.environment["POSEACT_KEEP_PICTURES"] {   // for looking at it
            try svg.write(toFile: keep + "/curves.svg", atomically: true, encoding: .utf8)
        }
        // Empty history still gives a valid document.
        XCTAssertNoThrow(try XMLDocument(xmlString: LearningCurves.svg([], title: "none")))
    }

    func testTicks() {
        XCTAssertEqual(LearningCurves.ticks(1, 12, integer: true, extend: false), [2, 4, 6, 8, 10, 12])
        XCTAssertEqual(LearningCurves.ticks(1, 3, integer: true, extend: false), [1, 2, 3])   // never below 1 epoch apart
        let y = LearningCurves.ticks(0, 2.21, integer: false, extend: true)
        XCTAssertEqual(y.count, 6)
        for (t, e) in zip(y, [0, 0.5, 1, 1.5, 2, 2.5]) { XCTAssertEqual(t, e, accuracy: 1e-12) }
    }

    func testCSVRoundTripWithNilCells() throws {
        let csv = LearningCurves.csv(Self.history)
        let lines = csv.split(separator: "\n")
        XCTAssertEqual(lines.first.map(String.init), "epoch,train_loss,train_accuracy,validation_loss,validation_accuracy,learning_rate,seconds")
        XCTAssertEqual(lines[4], "4,0.5,0.875,,,0.001,1.5")
        XCTAssertEqual(try LearningCurves.records(fromCSV: csv), Self.history)
        XCTAssertThrowsError(try LearningCurves.records(fromCSV: "epoch,loss\n1,2\n"))
    }

    func testEpochRecordKeysOnTheWire() throws {
        let data = Data(JSONLines.encode(Self.history[0]).utf8)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(Set(obj.keys), ["epoch", "train_loss", "train_accuracy", "validation_loss",
                                       "validation_accuracy", "learning_rate", "seconds"])
        XCTAssertEqual(try JSONLines.decode(EpochRecord.self, from: data), Self.history[0])
    }
}
