-- Wireshark dissector for the frames of the asic model's networks (`asic net ... --out DIR`
-- writes the pcaps):
--
--   * the hosts' transport header, the UDP payload of every host frame to UDP port 4791
--     (net/src/packet.rs). That port is RoCEv2's, so without this file Wireshark reads the
--     header as InfiniBand ("RRoCE ... Unknown Attribute");
--   * the per-queue pause / resume / bitmap frame of BFC-style control, EtherType 0x88B5
--     (net/src/ctrl.rs; programs/bfc/bfc.p4 builds and parses it as `qpause_h` + `bitmap_h`);
--   * the flow-group pause / resume / merge frame of control by congestion root, EtherType
--     0x88B6 (net/src/ctrl.rs; programs/pyrrha/pyrrha.p4 builds and parses it as `pyrrha_h`).
--
-- PFC frames (802.1Qbb) are standard and Wireshark decodes them without help.
--
-- Use:   tshark -r out/bfc/sw1-port2.pcap -X lua_script:tools/wireshark/asic.lua
--        wireshark -X lua_script:tools/wireshark/asic.lua out/bfc/sw1-port2.pcap
-- or copy this file into Wireshark's personal Lua plugins folder (Help > About > Folders).
--
-- Filter fields: asic.flags (asic.flags.data, .ack, .nack, .pull, .trimmed, .ece, .last),
-- asic.class, asic.queue, asic.seq, asic.echo, asic.flow_id, asic.ts_ps, asic.len,
-- asic.trimmed_by_length; asic_qpause.opcode, asic_qpause.queue_id, asic_qpause.bitmap_len,
-- asic_qpause.bitmap, asic_qpause.paused, asic_qpause.resumed, asic_qpause.trailer;
-- asic_group.opcode, asic_group.hop, asic_group.group, asic_group.old_group,
-- asic_group.old_hop, asic_group.trailer.

-- The layout. These tables mirror the Rust and P4 sources named beside each entry, and
-- tests/asic/wireshark.rs parses them (one `name = { offset, length },` or `name = value,`
-- per line) and compares them with those sources, so a change there fails the test until
-- it is made here too.

-- Constants: packet::UDP_PORT, packet::TRANSPORT_HEADER_BYTES, ctrl::QUEUE_PAUSE_ETHERTYPE,
-- ctrl::GROUP_PAUSE_ETHERTYPE (bfc.p4's MODEL_UDP_PORT and ETHERTYPE_QPAUSE, pyrrha.p4's
-- ETHERTYPE_PYRRHA are the same numbers).
local CONST = {
    udp_port = 4791,
    transport_header_bytes = 32,
    ethertype_qpause = 0x88B5,
    ethertype_group = 0x88B6,
}

-- The transport header, { offset in the UDP payload, length in bytes }, big-endian:
-- packet::field::* (offsets relative to packet::TRANSPORT_OFFSET).
local TRANSPORT = {
    flags = { 0, 1 },
    class = { 1, 1 },
    queue = { 2, 2 },
    seq = { 4, 4 },
    echo = { 8, 4 },
    flow_id = { 12, 8 },
    ts_ps = { 20, 8 },
    len = { 28, 4 },
}

-- The transport flags, bit by bit: packet::DATA, ACK, NACK, PULL, TRIMMED, ECE, LAST.
local FLAGS = {
    { "DATA", 0x01, "data packet" },
    { "ACK", 0x02, "acknowledgement" },
    { "NACK", 0x04, "negative acknowledgement (a trimmed packet's index)" },
    { "PULL", 0x08, "pull (receiver-driven transports)" },
    { "TRIMMED", 0x10, "payload trimmed off by a switch" },
    { "ECE", 0x20, "ECN echo: the acknowledged packet carried CE" },
    { "LAST", 0x40, "last packet of its flow" },
}
local FLAGS_BY_NAME = {}
for _, f in ipairs(FLAGS) do FLAGS_BY_NAME[f[1]] = f[2] end

-- The per-queue pause frame after the EtherType, { offset from the end of the Ethernet
-- header (frame byte 14), length }: net/src/ctrl.rs's table and bfc.p4's `qpause_h`. The
-- bitmap's length is the `bitmap_len` field (bfc.p4 sends 4 bytes, `bitmap_h`).
local QPAUSE = {
    opcode = { 0, 1 },
    reserved = { 1, 1 },
    queue_id = { 2, 2 },
    bitmap_len = { 4, 2 },
    bitmap = { 6, 0 },
}

-- Opcodes: ctrl::OP_PAUSE, OP_RESUME, OP_BITMAP (bfc.p4's OP_*).
local OPCODES = {
    [1] = "pause",
    [2] = "resume",
    [3] = "bitmap",
}
local OP = {}
for code, name in pairs(OPCODES) do OP[name] = code end

-- The flow-group frame after the EtherType, { offset from frame byte 14, length }:
-- net/src/ctrl.rs's table and pyrrha.p4's `pyrrha_h` (root = group).
local GROUP = {
    opcode = { 0, 1 },
    hop = { 1, 1 },
    group = { 2, 2 },
    old_group = { 4, 2 },
    old_hop = { 6, 1 },
    reserved = { 7, 1 },
}

-- Opcodes: ctrl::OP_GROUP_PAUSE, OP_GROUP_RESUME, OP_GROUP_MERGE (pyrrha.p4's OP_*).
local GROUP_OPCODES = {
    [1] = "pause",
    [2] = "resume",
    [3] = "merge",
}

---------------------------------------------------------------------------------------------
-- The transport header.

local asic = Proto("asic", "asic model transport")

-- What `seq` means depends on the packet's kind (packet.rs's table).
local SEQ_MEANING = {
    DATA = "packet index in the flow, 0-based",
    ACK = "cumulative ACK: next packet index expected",
    NACK = "the index lost (trimmed)",
    PULL = "the receiver's pull counter",
}

local tf = {
    flags = ProtoField.uint8("asic.flags", "Flags", base.HEX),
    class = ProtoField.uint8("asic.class", "Priority class", base.DEC, nil, nil,
        "priority class 0..7 (also in the IPv4 DSCP, class << 3)"),
    queue = ProtoField.uint16("asic.queue", "Queue (NIC queue / upstreamQ)", base.DEC, nil, nil,
        "the sender's NIC queue; BFC switches overwrite it with the queue the packet left"),
    seq = ProtoField.uint32("asic.seq", "Sequence", base.DEC, nil, nil,
        "DATA: packet index; ACK: next index expected; NACK: index lost; PULL: pull counter"),
    echo = ProtoField.uint32("asic.echo", "Echo", base.DEC, nil, nil,
        "ACK/NACK: the index of the packet that caused it"),
    flow_id = ProtoField.uint64("asic.flow_id", "Flow id", base.DEC),
    ts_ps = ProtoField.uint64("asic.ts_ps", "Timestamp (ps)", base.DEC, nil, nil,
        "DATA: when the sender sent it; ACK/NACK: echoed from the packet acknowledged"),
    len = ProtoField.uint32("asic.len", "Application bytes", base.DEC, nil, nil,
        "DATA: application bytes carried (when trimmed: what it had carried)"),
}
for name in pairs(TRANSPORT) do
    assert(tf[name], "asic.lua: no ProtoField for transport field " .. name)
end
-- The transport fields in header order.
local TRANSPORT_ORDER = {}
for name in pairs(TRANSPORT) do table.insert(TRANSPORT_ORDER, name) end
table.sort(TRANSPORT_ORDER, function(a, b) return TRANSPORT[a][1] < TRANSPORT[b][1] end)

local flag_fields = {}
for _, f in ipairs(FLAGS) do
    flag_fields[f[1]] = ProtoField.bool("asic.flags." .. f[1]:lower(), f[1], 8, nil, f[2], f[3])
end
local f_trimmed_by_length = ProtoField.bool("asic.trimmed_by_length", "Trimmed (shorter than its len)",
    base.NONE, nil, nil, "a DATA frame shorter than its headers + len is a trimmed header, flag or not")
local f_payload = ProtoField.bytes("asic.payload", "Application payload")

for _, name in ipairs(TRANSPORT_ORDER) do table.insert(asic.fields, tf[name]) end
for _, f in ipairs(FLAGS) do table.insert(asic.fields, flag_fields[f[1]]) end
table.insert(asic.fields, f_trimmed_by_length)
table.insert(asic.fields, f_payload)

local ef_short = ProtoExpert.new("asic.short", "Shorter than the transport header",
    expert.group.MALFORMED, expert.severity.ERROR)
local ef_trimmed = ProtoExpert.new("asic.trimmed", "Trimmed: the payload was cut off",
    expert.group.SEQUENCE, expert.severity.NOTE)
asic.experts = { ef_short, ef_trimmed }

local function range(tvb, spec)
    return tvb(spec[1], spec[2])
end

function asic.dissector(tvb, pinfo, tree)
    pinfo.cols.protocol = "ASIC"
    local subtree = tree:add(asic, tvb(0, math.min(tvb:len(), CONST.transport_header_bytes)))
    if tvb:len() < CONST.transport_header_bytes then
        subtree:add_proto_expert_info(ef_short)
        pinfo.cols.info:set("asic transport, truncated")
        return tvb:len()
    end

    local flags = range(tvb, TRANSPORT.flags):uint()
    local names = {}
    for _, f in ipairs(FLAGS) do
        if bit.band(flags, f[2]) ~= 0 then table.insert(names, f[1]) end
    end
    local ftree = subtree:add(tf.flags, range(tvb, TRANSPORT.flags))
    ftree:append_text(" (" .. (#names > 0 and table.concat(names, ", ") or "none") .. ")")
    for _, f in ipairs(FLAGS) do
        ftree:add(flag_fields[f[1]], range(tvb, TRANSPORT.flags))
    end

    local seq = range(tvb, TRANSPORT.seq):uint()
    local echo = range(tvb, TRANSPORT.echo):uint()
    local flow = range(tvb, TRANSPORT.flow_id):uint64()
    local len = range(tvb, TRANSPORT.len):uint()
    -- The kind that decides what `seq` means (hosts set exactly one of these).
    local kind
    for _, k in ipairs({ "DATA", "NACK", "PULL", "ACK" }) do
        if not kind and bit.band(flags, FLAGS_BY_NAME[k]) ~= 0 then kind = k end
    end
    -- Every other field of the table, in header order, with what its value means added.
    for _, name in ipairs(TRANSPORT_ORDER) do
        if name ~= "flags" then
            local item = subtree:add(tf[name], range(tvb, TRANSPORT[name]))
            if name == "seq" and kind then
                item:append_text(" (" .. SEQ_MEANING[kind] .. ")")
            elseif name == "ts_ps" then
                local ts = range(tvb, TRANSPORT.ts_ps):uint64()
                item:append_text(string.format(" (%.6f µs)", ts:tonumber() / 1e6))
            end
        end
    end

    -- As packet::parse decides: a DATA frame shorter than its headers + `len` was trimmed
    -- by a switch (a truncating mirror keeps the IPv4/UDP lengths of the whole packet).
    local carried = tvb:reported_length_remaining(CONST.transport_header_bytes)
    local trimmed = bit.band(flags, FLAGS_BY_NAME.DATA) ~= 0 and carried < len
    if bit.band(flags, FLAGS_BY_NAME.DATA) ~= 0 then
        subtree:add(f_trimmed_by_length, trimmed):set_generated()
        if trimmed then subtree:add_proto_expert_info(ef_trimmed) end
    end
    if carried > 0 then
        subtree:add(f_payload, tvb(CONST.transport_header_bytes))
    end

    local info = string.format("%s flow %s seq %d", #names > 0 and table.concat(names, "|") or "-",
        tostring(flow), seq)
    if kind == "ACK" or kind == "NACK" then info = info .. string.format(" echo %d", echo) end
    if kind == "DATA" then info = info .. string.format(" len %d", len) end
    if trimmed then info = info .. " [trimmed]" end
    pinfo.cols.info:set(info)
    return tvb:len()
end

---------------------------------------------------------------------------------------------
-- The per-queue pause frame.

local qpause = Proto("asic_qpause", "asic model per-queue pause")
local qf = {
    opcode = ProtoField.uint8("asic_qpause.opcode", "Opcode", base.DEC, OPCODES),
    reserved = ProtoField.uint8("asic_qpause.reserved", "Reserved", base.HEX),
    queue_id = ProtoField.uint16("asic_qpause.queue_id", "Queue id", base.DEC, nil, nil,
        "pause/resume: the queue; bitmap: the first queue the bitmap covers"),
    bitmap_len = ProtoField.uint16("asic_qpause.bitmap_len", "Bitmap length (bytes)", base.DEC),
    bitmap = ProtoField.bytes("asic_qpause.bitmap", "Bitmap"),
}
local f_paused = ProtoField.uint16("asic_qpause.paused", "Paused queue", base.DEC, nil, nil,
    "a queue the bitmap sets: paused")
local f_resumed = ProtoField.uint16("asic_qpause.resumed", "Resumed queue", base.DEC, nil, nil,
    "a queue the bitmap covers and does not set: resumed")
-- Bytes after the header (and bitmap), which receivers ignore: ctrl.rs pads its frames with
-- zeros to 60 bytes, while bfc.p4 makes its frames from packets it had (a data packet's
-- mirrored copy, a dequeue record) and leaves what remains of them.
local f_trailer = ProtoField.bytes("asic_qpause.trailer", "Trailer (ignored: padding or leftover bytes)")
for name in pairs(QPAUSE) do
    assert(qf[name], "asic.lua: no ProtoField for per-queue pause field " .. name)
end
for _, f in pairs(qf) do table.insert(qpause.fields, f) end
table.insert(qpause.fields, f_paused)
table.insert(qpause.fields, f_resumed)
table.insert(qpause.fields, f_trailer)

local eq_short = ProtoExpert.new("asic_qpause.short", "Shorter than the pause header",
    expert.group.MALFORMED, expert.severity.ERROR)
local eq_opcode = ProtoExpert.new("asic_qpause.bad_opcode", "Unknown opcode (the NIC ignores the frame)",
    expert.group.MALFORMED, expert.severity.WARN)
qpause.experts = { eq_short, eq_opcode }

-- "3, 5-7, 12": a sorted list of queues with runs collapsed.
local function queue_list(qs)
    local parts, i = {}, 1
    while i <= #qs do
        local j = i
        while j < #qs and qs[j + 1] == qs[j] + 1 do j = j + 1 end
        table.insert(parts, i == j and tostring(qs[i]) or (qs[i] .. "-" .. qs[j]))
        i = j + 1
    end
    return #parts > 0 and table.concat(parts, ", ") or "none"
end

function qpause.dissector(tvb, pinfo, tree)
    pinfo.cols.protocol = "ASIC-QPAUSE"
    local fixed = QPAUSE.bitmap[1]
    local subtree = tree:add(qpause, tvb(0, math.min(tvb:len(), fixed)))
    if tvb:len() < fixed then
        subtree:add_proto_expert_info(eq_short)
        pinfo.cols.info:set("per-queue pause, truncated")
        return tvb:len()
    end
    local op = range(tvb, QPAUSE.opcode):uint()
    local q = range(tvb, QPAUSE.queue_id):uint()
    local n = range(tvb, QPAUSE.bitmap_len):uint()
    local op_item = subtree:add(qf.opcode, range(tvb, QPAUSE.opcode))
    subtree:add(qf.reserved, range(tvb, QPAUSE.reserved))
    subtree:add(qf.queue_id, range(tvb, QPAUSE.queue_id))
    subtree:add(qf.bitmap_len, range(tvb, QPAUSE.bitmap_len))
    local used = fixed

    if op == OP.pause or op == OP.resume then
        pinfo.cols.info:set(string.format("%s queue %d", OPCODES[op], q))
    elseif op == OP.bitmap and n == 0 then
        pinfo.cols.info:set(string.format("bitmap covering no queues (from %d)", q))
    elseif op == OP.bitmap then
        if tvb:len() < fixed + n then
            subtree:add_proto_expert_info(eq_short)
            pinfo.cols.info:set("bitmap, truncated")
            return tvb:len()
        end
        subtree:set_len(fixed + n)
        used = fixed + n
        local btree = subtree:add(qf.bitmap, tvb(fixed, n))
        -- Bit i (byte i/8, least significant bit first) is queue queue_id + i.
        local paused = {}
        for i = 0, 8 * n - 1 do
            local byte_range = tvb(fixed + math.floor(i / 8), 1)
            local queue = q + i
            if bit.band(byte_range:uint(), bit.lshift(1, i % 8)) ~= 0 then
                table.insert(paused, queue)
                btree:add(f_paused, byte_range, queue):set_generated()
            else
                btree:add(f_resumed, byte_range, queue):set_generated()
            end
        end
        btree:append_text(string.format(" (queues %d-%d; paused: %s)", q, q + 8 * n - 1,
            queue_list(paused)))
        pinfo.cols.info:set(string.format("bitmap queues %d-%d paused: %s", q, q + 8 * n - 1,
            queue_list(paused)))
    else
        op_item:add_proto_expert_info(eq_opcode)
        pinfo.cols.info:set(string.format("unknown opcode %d queue %d", op, q))
    end
    if tvb:len() > used then
        subtree:add(f_trailer, tvb(used))
    end
    return tvb:len()
end

---------------------------------------------------------------------------------------------
-- The flow-group frame.

local group = Proto("asic_group", "asic model flow-group pause")
local gf = {
    opcode = ProtoField.uint8("asic_group.opcode", "Opcode", base.DEC, GROUP_OPCODES),
    hop = ProtoField.uint8("asic_group.hop", "Hops", base.DEC, nil, nil,
        "how far the group's port is from the receiver (switches read it; hosts ignore it)"),
    group = ProtoField.uint16("asic_group.group", "Group", base.DEC, nil, nil,
        "the group paused or resumed; of a merge, the new one (Pyrrha: a congestion root)"),
    old_group = ProtoField.uint16("asic_group.old_group", "Old group", base.DEC, nil, nil,
        "of a merge: the group whose pause ends"),
    old_hop = ProtoField.uint8("asic_group.old_hop", "Old group's hops", base.DEC),
    reserved = ProtoField.uint8("asic_group.reserved", "Reserved", base.HEX),
}
-- Bytes after the header, which receivers ignore (pyrrha.p4 makes frames from packets it
-- had, as bfc.p4 does).
local gf_trailer = ProtoField.bytes("asic_group.trailer", "Trailer (ignored: padding or leftover bytes)")
for name in pairs(GROUP) do
    assert(gf[name], "asic.lua: no ProtoField for flow-group field " .. name)
end
for _, f in pairs(gf) do table.insert(group.fields, f) end
table.insert(group.fields, gf_trailer)
local eg_short = ProtoExpert.new("asic_group.short", "Shorter than the flow-group header",
    expert.group.MALFORMED, expert.severity.ERROR)
local eg_opcode = ProtoExpert.new("asic_group.bad_opcode", "Unknown opcode (ignored)",
    expert.group.MALFORMED, expert.severity.WARN)
group.experts = { eg_short, eg_opcode }

function group.dissector(tvb, pinfo, tree)
    pinfo.cols.protocol = "ASIC-GROUP"
    local fixed = GROUP.reserved[1] + GROUP.reserved[2]
    local subtree = tree:add(group, tvb(0, math.min(tvb:len(), fixed)))
    if tvb:len() < fixed then
        subtree:add_proto_expert_info(eg_short)
        pinfo.cols.info:set("flow-group frame, truncated")
        return tvb:len()
    end
    local op = range(tvb, GROUP.opcode):uint()
    local g = range(tvb, GROUP.group):uint()
    local hop = range(tvb, GROUP.hop):uint()
    local op_item = subtree:add(gf.opcode, range(tvb, GROUP.opcode))
    for _, name in ipairs({ "hop", "group", "old_group", "old_hop", "reserved" }) do
        subtree:add(gf[name], range(tvb, GROUP[name]))
    end
    local function hops(n) return n == 1 and "1 hop" or (n .. " hops") end
    if op == 1 or op == 2 then
        pinfo.cols.info:set(string.format("%s group %d (%s)", GROUP_OPCODES[op], g, hops(hop)))
    elseif op == 3 then
        pinfo.cols.info:set(string.format("merge group %d (%s) into %d (%s)",
            range(tvb, GROUP.old_group):uint(), hops(range(tvb, GROUP.old_hop):uint()), g,
            hops(hop)))
    else
        op_item:add_proto_expert_info(eg_opcode)
        pinfo.cols.info:set(string.format("unknown opcode %d group %d", op, g))
    end
    if tvb:len() > fixed then
        subtree:add(gf_trailer, tvb(fixed))
    end
    return tvb:len()
end

DissectorTable.get("udp.port"):add(CONST.udp_port, asic)
DissectorTable.get("ethertype"):add(CONST.ethertype_qpause, qpause)
DissectorTable.get("ethertype"):add(CONST.ethertype_group, group)
