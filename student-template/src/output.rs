//! The output lines of the contract, formatted exactly. This part is done for you.
//!
//! Your leader calls these methods through `self.out`; `main.rs` moves the
//! lines to stdout after every command. Only protocol lines belong on stdout:
//! print debugging output to stderr (`eprintln!`), or the grader sees it as a
//! wrong answer.

use std::fmt::Write as _;
use std::io;

/// The lines your leader has written and `main.rs` has not yet sent to stdout.
#[derive(Debug, Default)]
pub struct Output {
    pending: String,
}

impl Output {
    pub fn new() -> Output {
        Output::default()
    }

    /// `<t> ACK <base>`: the acks=all produce request whose first record got
    /// offset `base` is answered at time `t`.
    pub fn ack(&mut self, t: u64, base: u64) {
        // Writing to a String cannot fail.
        let _ = writeln!(self.pending, "{t} ACK {base}");
    }

    /// `<t> NOT_ENOUGH_REPLICAS`: the produce request at time `t` is refused.
    pub fn not_enough_replicas(&mut self, t: u64) {
        let _ = writeln!(self.pending, "{t} NOT_ENOUGH_REPLICAS");
    }

    /// `<t> STATUS ISR=<ids> HW=<hw> LEO=<leo> WRITES=<OK|NOT_ENOUGH_REPLICAS>`.
    ///
    /// `isr` lists the ids of the ISR members **in the order of the REPLICAS
    /// line** (the leader first); `leo` is the leader's LEO; `writes_ok` says
    /// whether the ISR has at least MIN_ISR members.
    pub fn status(&mut self, t: u64, isr: &[u64], hw: u64, leo: u64, writes_ok: bool) {
        let _ = write!(self.pending, "{t} STATUS ISR=");
        for (i, id) in isr.iter().enumerate() {
            let comma = if i == 0 { "" } else { "," };
            let _ = write!(self.pending, "{comma}{id}");
        }
        let writes = if writes_ok {
            "OK"
        } else {
            "NOT_ENOUGH_REPLICAS"
        };
        let _ = writeln!(self.pending, " HW={hw} LEO={leo} WRITES={writes}");
    }

    /// The lines written so far and not yet sent.
    pub fn pending(&self) -> &str {
        &self.pending
    }

    /// Sends the pending lines to `w` and forgets them (used by `main.rs`).
    pub fn send_to(&mut self, w: &mut impl io::Write) -> io::Result<()> {
        let result = w.write_all(self.pending.as_bytes());
        self.pending.clear();
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_the_contract_lines() {
        let mut out = Output::new();
        out.ack(7, 12);
        out.not_enough_replicas(8);
        out.status(130, &[5, 6, 7], 2, 4, true);
        out.status(550, &[5], 4, 9, false);
        assert_eq!(
            out.pending(),
            "7 ACK 12\n\
             8 NOT_ENOUGH_REPLICAS\n\
             130 STATUS ISR=5,6,7 HW=2 LEO=4 WRITES=OK\n\
             550 STATUS ISR=5 HW=4 LEO=9 WRITES=NOT_ENOUGH_REPLICAS\n"
        );
        let written = out.pending().to_string();
        let mut sent = Vec::new();
        out.send_to(&mut sent).unwrap();
        assert_eq!(sent, written.as_bytes());
        assert_eq!(out.pending(), "", "sent lines are not sent twice");
    }
}
