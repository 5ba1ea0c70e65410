// tna.p4: the Tofino Native Architecture as this compiler knows it.
//
// The compiler builds these types in (a program that does not include this file may use
// them all the same); what is declared here is checked against what the compiler knows, so
// this file is the list of the intrinsic metadata the model has. Fields marked `model` are not
// in Intel's tna.p4; fields of Intel's file the model lacks (the resubmit flag, the padding,
// the ghost thread's metadata...) are not here, and a program naming one is refused by name.
//
// Also built in, and so not declared here: the externs (Register and RegisterAction,
// MinMaxAction (t2na.p4), Meter, Counter, DirectCounter, Hash, Random, Checksum, Mirror, and
// the model's QueueDepth), the enums they take (CounterType_t, MeterType_t,
// HashAlgorithm_t), and the Pipeline and Switch packages.

#include <core.p4>

typedef bit<9>  PortId_t;
typedef bit<7>  QueueId_t;
typedef bit<16> MulticastGroupId_t;
typedef bit<10> MirrorId_t;
typedef bit<16> ReplicationId_t;

// ----------------------------------------------------------------------------------------
// Ingress

// What the MAC tells ingress about the packet.
struct ingress_intrinsic_metadata_t {
    PortId_t ingress_port;
    bit<48>  ingress_mac_tstamp;   // ns, when the packet's first bit arrived
    bit<16>  pkt_length;           // model: the packet's length in bytes
    bit<1>   mirror_on_drop_flag;  // model, what-if: 1 in a mirror-on-drop copy (the
                                   // chip's `mirror_on_drop`; no Tofino has one)
}

// What the ingress parser tells the control.
struct ingress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;         // ns, when the packet entered the pipe
    bit<16> parser_err;            // PARSER_ERROR_* bits; reading it keeps failed packets
}

// What ingress asks of the traffic manager.
struct ingress_intrinsic_metadata_for_tm_t {
    PortId_t           ucast_egress_port;
    QueueId_t          qid;
    MulticastGroupId_t mcast_grp_a;
    bit<1>             deflect_on_drop;
    bit<3>             ingress_cos;
    bit<1>             bypass_egress;
    bit<1>             recirculate;   // model: send the packet back through ingress
    bit<2>             packet_color;  // green 0, yellow 1, red 3: the TM's colour drop limit or class
}

// What ingress asks of its deparser.
struct ingress_intrinsic_metadata_for_deparser_t {
    bit<3>     drop_ctl;
    MirrorId_t mirror_session;     // model: TNA picks the session in the Mirror extern
    bit<14>    mtu_trunc_len;      // model: truncate mirror copies to this many bytes
    bit<32>    adv_flow_ctl;
}

// ----------------------------------------------------------------------------------------
// Egress

// What the traffic manager tells egress about the packet.
struct egress_intrinsic_metadata_t {
    PortId_t        egress_port;
    QueueId_t       egress_qid;
    bit<19>         enq_qdepth;        // cells in the queue when the packet was enqueued
    bit<19>         deq_qdepth;        // and when it was dequeued
    bit<19>         enq_qdepth_pkts;   // model: the same in packets
    bit<19>         deq_qdepth_pkts;   // model
    bit<16>         pkt_length;
    bit<32>         deq_timedelta;     // ns the packet waited in the queue
    bit<2>          enq_congest_stat;
    ReplicationId_t egress_rid;
    bit<1>          deflection_flag;
}

// What the egress parser tells the control.
struct egress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;
    bit<16> parser_err;
}

// What egress asks of its deparser.
struct egress_intrinsic_metadata_for_deparser_t {
    bit<3>     drop_ctl;
    MirrorId_t mirror_session;     // model
    bit<14>    mtu_trunc_len;      // model
    bit<32>    adv_flow_ctl;
}
