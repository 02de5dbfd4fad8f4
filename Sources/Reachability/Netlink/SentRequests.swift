/// The requests of one batch of route lookups, in the order sent: each
/// one's sequence number and the slot its answer fills.
///
/// The kernel answers in the order asked, so each frame is looked for from
/// just after the one found last, and found there at the first look unless
/// an answer was lost: a batch's answers are matched without hashing. With
/// a dictionary per batch, a route change in-process took 117.3k
/// instructions; with this, 114.8k (`bench/instructions.py`).
struct SentRequests {
    private var sent: [(sequence: UInt32, slot: Int)] = []
    /// Where the next answer is looked for first.
    private var next = 0

    init(capacity: Int) {
        sent.reserveCapacity(capacity)
    }

    var count: Int { sent.count }

    mutating func add(_ sequence: UInt32, slot: Int) {
        sent.append((sequence, slot))
    }

    /// The slot of the request `sequence` answers; `nil` for a sequence
    /// this batch did not send (a late answer to an earlier one).
    mutating func slot(answering sequence: UInt32) -> Int? {
        var index = next
        for _ in 0..<sent.count {
            if index == sent.count { index = 0 }
            if sent[index].sequence == sequence {
                next = index + 1
                return sent[index].slot
            }
            index += 1
        }
        return nil
    }
}
