//! The packet generator: [`super::PktGenApp`]s fire at exactly `start + k·period` (and at
//! each one-shot time), and the template enters the pipe's ingress at once (no MAC
//! serialization) through the pipe's packet-generator port, taking an issue slot.
//!
//! Apart from the life of a packet because it is a source of packets inside the chip, not
//! a port on the wire: [`Chip::start`] schedules the applications, and each tick or shot
//! makes one packet.

use super::{Chip, ChipEvent};
use crate::kernel::Schedule;
use pipelines::time::Time;

impl Chip {
    /// Schedule the packet generator's first packets. Call once, before running the kernel
    /// (the bench does).
    pub fn start(&mut self, q: &mut impl Schedule<ChipEvent>) {
        for (a, app) in self.pktgen.iter().enumerate() {
            let app_id = a as u16;
            if app.period_ns.is_some() && app.count != Some(0) {
                q.at(
                    Time::from_ns(app.start_ns),
                    ChipEvent::PktGenTick { app: app_id },
                );
            }
            for (i, &at) in app.at_ns.iter().enumerate() {
                q.at(
                    Time::from_ns(at),
                    ChipEvent::PktGenShot {
                        app: app_id,
                        i: i as u32,
                    },
                );
            }
        }
    }

    /// A packet-generator application makes its packet: it enters the pipe's ingress at
    /// once (no MAC), through the pipe's packet-generator port.
    pub(super) fn generate(&mut self, now: Time, app: u16, q: &mut impl Schedule<ChipEvent>) {
        let a = &self.pktgen[app as usize];
        // The configuration check refused applications of pipes the chip lacks.
        let Some(port) = self.profile.pktgen_port(a.pipe) else {
            return;
        };
        let h = self.packets.alloc();
        let pkt = &mut self.packets.slots[h as usize];
        pkt.data.extend_from_slice(&a.template);
        pkt.ingress_port = port;
        pkt.rx_start = now;
        self.plumbing.generated += 1;
        let c = &mut self.ports[port as usize].counters;
        c.rx_packets += 1;
        c.rx_bytes += a.template.len() as u64;
        self.issue_ingress(now, h, q);
    }
}
