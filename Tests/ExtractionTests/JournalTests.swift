import XCTest
@testable import Extraction

final class JournalTests: XCTestCase {
    /// A resumed extraction finds an earlier run's parts by these names.
    func testJournalFileNamesStayTheSame() {
        XCTAssertEqual(Extractor.fileKey("abc"), "ba7816bf8f01cfea414140de")
    }
}
