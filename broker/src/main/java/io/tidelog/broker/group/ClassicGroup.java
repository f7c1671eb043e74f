package io.tidelog.broker.group;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.apache.kafka.common.protocol.Errors;

/**
 * One consumer group under Kafka's classic protocol: its members, generation and rebalances, as
 * Kafka's {@code ClassicGroup} keeps them.
 *
 * <ul>
 *   <li>A rebalance ({@code PREPARING_REBALANCE}) ends when every member has joined again, or when
 *       the largest rebalance timeout of its members passes, which drops those that did not. A
 *       group that was empty first waits {@code group.initial.rebalance.delay.ms} for more members.
 *   <li>Ending it bumps the generation, picks the protocol every member supports with the most
 *       first choices, keeps the leader if it stayed (else the first member), answers every
 *       JoinGroup (the leader with all members' metadata) and waits for the leader's SyncGroup
 *       ({@code COMPLETING_REBALANCE}), whose assignments every member's SyncGroup gets.
 *   <li>A member whose session timeout passes without a heartbeat, join or sync is removed, which
 *       starts a rebalance. A first JoinGroup without a member id gets MEMBER_ID_REQUIRED and a new
 *       id (KIP-394). A static member ({@code group.instance.id}) that joins again takes its old
 *       place, fencing the old member id, without a rebalance unless the group's protocol would
 *       change.
 * </ul>
 *
 * <p>Not thread-safe: its coordinator calls it from one thread, with the time, and calls {@link
 * #tick} at {@link #nextDeadlineMs()}.
 */
public final class ClassicGroup {
  /** The group states of Kafka's classic protocol. */
  public enum State {
    EMPTY,
    PREPARING_REBALANCE,
    COMPLETING_REBALANCE,
    STABLE
  }

  /** A protocol a member supports, with the metadata it sends for it. */
  public record Protocol(String name, byte[] metadata) {}

  /** What a JoinGroup asks. */
  public record JoinRequest(
      String memberId,
      String groupInstanceId,
      String clientId,
      String clientHost,
      String protocolType,
      List<Protocol> protocols,
      int sessionTimeoutMs,
      int rebalanceTimeoutMs,
      boolean requireKnownMemberId) {}

  /** A member's metadata for the chosen protocol, as the leader gets it. */
  public record JoinedMember(String memberId, String groupInstanceId, byte[] metadata) {}

  /** A JoinGroup's answer; {@code members} is filled for the leader only. */
  public record JoinResult(
      Errors error,
      int generation,
      String protocolType,
      String protocolName,
      String leaderId,
      String memberId,
      List<JoinedMember> members) {
    static JoinResult error(Errors error, String memberId) {
      return new JoinResult(error, -1, null, null, "", memberId, List.of());
    }
  }

  /** A member as DescribeGroups shows it and {@code __consumer_offsets} stores it. */
  public record MemberSnapshot(
      String memberId,
      String groupInstanceId,
      String clientId,
      String clientHost,
      int rebalanceTimeoutMs,
      int sessionTimeoutMs,
      byte[] metadata,
      byte[] assignment) {}

  /**
   * The group as DescribeGroups shows it and {@code __consumer_offsets} stores it.
   *
   * @param stateTimestampMs when the group last became empty, or -1
   */
  public record Snapshot(
      State state,
      String protocolType,
      int generation,
      String protocolName,
      String leaderId,
      long stateTimestampMs,
      List<MemberSnapshot> members) {}

  /** A SyncGroup's answer. */
  public record SyncResult(
      Errors error, String protocolType, String protocolName, byte[] assignment) {
    static SyncResult error(Errors error) {
      return new SyncResult(error, null, null, new byte[0]);
    }
  }

  private static final class Member {
    final String memberId;
    final String groupInstanceId;
    final String clientId;
    final String clientHost;
    List<Protocol> protocols;
    int sessionTimeoutMs;
    int rebalanceTimeoutMs;
    long sessionDeadlineMs;
    CompletableFuture<JoinResult> awaitingJoin;
    CompletableFuture<SyncResult> awaitingSync;
    byte[] assignment = new byte[0];

    Member(String memberId, JoinRequest request) {
      this.memberId = memberId;
      this.groupInstanceId = request.groupInstanceId();
      this.clientId = request.clientId();
      this.clientHost = request.clientHost();
      update(request);
    }

    void update(JoinRequest request) {
      protocols = List.copyOf(request.protocols());
      sessionTimeoutMs = request.sessionTimeoutMs();
      rebalanceTimeoutMs = request.rebalanceTimeoutMs();
    }

    byte[] metadata(String protocol) {
      return protocols.stream()
          .filter(p -> p.name().equals(protocol))
          .findFirst()
          .map(Protocol::metadata)
          .orElse(new byte[0]);
    }

    boolean sameProtocols(List<Protocol> other) {
      if (other.size() != protocols.size()) {
        return false;
      }
      for (int i = 0; i < other.size(); i++) {
        Protocol a = protocols.get(i);
        Protocol b = other.get(i);
        if (!a.name().equals(b.name()) || !Arrays.equals(a.metadata(), b.metadata())) {
          return false;
        }
      }
      return true;
    }
  }

  private final String groupId;
  private final long initialRebalanceDelayMs;
  private final Map<String, Member> members = new LinkedHashMap<>();
  private final Map<String, String> staticMembers = new HashMap<>();

  /** Member ids handed out with MEMBER_ID_REQUIRED, to their expiry time. */
  private final Map<String, Long> pendingMembers = new HashMap<>();

  private State state = State.EMPTY;
  private int generation;
  private String protocolType;
  private String protocolName;
  private String leaderId;
  private long rebalanceDeadlineMs = Long.MAX_VALUE;
  private long joinNotBeforeMs;
  private long emptySinceMs;

  public ClassicGroup(String groupId, long initialRebalanceDelayMs, long nowMs) {
    this.groupId = groupId;
    this.initialRebalanceDelayMs = initialRebalanceDelayMs;
    this.emptySinceMs = nowMs;
  }

  /**
   * A group as a coordinator loads it: stable with its stored members, each of whom gets a full
   * session from {@code nowMs} to heartbeat, or empty.
   */
  public static ClassicGroup restore(
      String groupId, long initialRebalanceDelayMs, Snapshot stored, long nowMs) {
    ClassicGroup group = new ClassicGroup(groupId, initialRebalanceDelayMs, nowMs);
    group.generation = stored.generation();
    group.protocolType = stored.protocolType();
    group.emptySinceMs = stored.stateTimestampMs() < 0 ? nowMs : stored.stateTimestampMs();
    if (stored.members().isEmpty() || stored.protocolName() == null) {
      return group;
    }
    group.protocolName = stored.protocolName();
    group.leaderId = stored.leaderId();
    for (MemberSnapshot m : stored.members()) {
      Member member =
          new Member(
              m.memberId(),
              new JoinRequest(
                  m.memberId(),
                  m.groupInstanceId(),
                  m.clientId(),
                  m.clientHost(),
                  stored.protocolType(),
                  List.of(new Protocol(stored.protocolName(), m.metadata())),
                  m.sessionTimeoutMs(),
                  m.rebalanceTimeoutMs(),
                  false));
      member.assignment = m.assignment();
      member.sessionDeadlineMs = nowMs + m.sessionTimeoutMs();
      group.members.put(m.memberId(), member);
      if (m.groupInstanceId() != null) {
        group.staticMembers.put(m.groupInstanceId(), m.memberId());
      }
    }
    group.state = State.STABLE;
    return group;
  }

  /** The group now, members with their metadata for the chosen protocol and assignments. */
  public Snapshot snapshot() {
    List<MemberSnapshot> described =
        members.values().stream()
            .map(
                m ->
                    new MemberSnapshot(
                        m.memberId,
                        m.groupInstanceId,
                        m.clientId,
                        m.clientHost,
                        m.rebalanceTimeoutMs,
                        m.sessionTimeoutMs,
                        protocolName == null ? new byte[0] : m.metadata(protocolName),
                        m.assignment))
            .toList();
    return new Snapshot(
        state,
        protocolType,
        generation,
        protocolName,
        leaderId,
        state == State.EMPTY ? emptySinceMs : -1,
        described);
  }

  public String groupId() {
    return groupId;
  }

  public State state() {
    return state;
  }

  public String protocolType() {
    return protocolType;
  }

  /** When the group last became empty (-1 when unknown); meaningful while it is empty. */
  public long emptySinceMs() {
    return emptySinceMs;
  }

  public int generation() {
    return generation;
  }

  public Optional<String> leaderId() {
    return Optional.ofNullable(leaderId);
  }

  public int size() {
    return members.size();
  }

  public CompletableFuture<JoinResult> join(JoinRequest request, long nowMs) {
    if (request.protocols().isEmpty()
        || (!members.isEmpty() && !request.protocolType().equals(protocolType))
        || !supportsCommonProtocol(request.protocols())) {
      return CompletableFuture.completedFuture(
          JoinResult.error(Errors.INCONSISTENT_GROUP_PROTOCOL, request.memberId()));
    }
    String memberId = request.memberId();
    if (memberId.isEmpty()) {
      String newId = request.clientId() + "-" + UUID.randomUUID();
      if (request.groupInstanceId() != null) {
        return joinStatic(newId, request, nowMs);
      }
      if (request.requireKnownMemberId()) {
        pendingMembers.put(newId, nowMs + request.sessionTimeoutMs());
        return CompletableFuture.completedFuture(
            JoinResult.error(Errors.MEMBER_ID_REQUIRED, newId));
      }
      return joinNew(newId, request, nowMs);
    }
    if (pendingMembers.remove(memberId) != null) {
      return joinNew(memberId, request, nowMs);
    }
    Member member = members.get(memberId);
    if (member == null) {
      return CompletableFuture.completedFuture(
          JoinResult.error(Errors.UNKNOWN_MEMBER_ID, memberId));
    }
    if (request.groupInstanceId() != null
        && !memberId.equals(staticMembers.get(request.groupInstanceId()))) {
      return CompletableFuture.completedFuture(
          JoinResult.error(Errors.FENCED_INSTANCE_ID, memberId));
    }
    return joinKnown(member, request, nowMs);
  }

  private boolean supportsCommonProtocol(List<Protocol> protocols) {
    if (members.isEmpty()) {
      return true;
    }
    return protocols.stream().map(Protocol::name).anyMatch(candidates()::contains);
  }

  /** The protocols every member supports. */
  private List<String> candidates() {
    List<String> common = null;
    for (Member member : members.values()) {
      List<String> names = member.protocols.stream().map(Protocol::name).toList();
      if (common == null) {
        common = new ArrayList<>(names);
      } else {
        common.retainAll(names);
      }
    }
    return common == null ? List.of() : common;
  }

  private CompletableFuture<JoinResult> joinNew(String memberId, JoinRequest request, long nowMs) {
    if (members.isEmpty()) {
      protocolType = request.protocolType();
    }
    Member member = new Member(memberId, request);
    members.put(memberId, member);
    if (member.groupInstanceId != null) {
      staticMembers.put(member.groupInstanceId, memberId);
    }
    return awaitJoin(member, nowMs);
  }

  /** A static member joining without its member id: it replaces its earlier incarnation. */
  private CompletableFuture<JoinResult> joinStatic(String newId, JoinRequest request, long nowMs) {
    String oldId = staticMembers.get(request.groupInstanceId());
    Member old = oldId == null ? null : members.get(oldId);
    if (old == null) {
      return joinNew(newId, request, nowMs);
    }
    Member replacement = new Member(newId, request);
    replacement.assignment = old.assignment;
    fail(old, Errors.FENCED_INSTANCE_ID);
    members.remove(oldId);
    members.put(newId, replacement);
    staticMembers.put(request.groupInstanceId(), newId);
    if (oldId.equals(leaderId)) {
      leaderId = newId;
    }
    // As in Kafka (KIP-345): a stable group does not rebalance for a returning static member
    // unless the protocol it would choose changes; its subscription metadata may differ (a
    // restarted consumer owns no partitions yet)
    if (state == State.STABLE && protocolName.equals(selectProtocol())) {
      replacement.sessionDeadlineMs = nowMs + replacement.sessionTimeoutMs;
      return CompletableFuture.completedFuture(result(replacement));
    }
    return awaitJoin(replacement, nowMs);
  }

  private CompletableFuture<JoinResult> joinKnown(Member member, JoinRequest request, long nowMs) {
    member.sessionDeadlineMs = nowMs + member.sessionTimeoutMs;
    boolean unchanged = member.sameProtocols(request.protocols());
    member.update(request);
    if (unchanged
        && !member.memberId.equals(leaderId)
        && (state == State.STABLE || state == State.COMPLETING_REBALANCE)) {
      return CompletableFuture.completedFuture(result(member));
    }
    return awaitJoin(member, nowMs);
  }

  private CompletableFuture<JoinResult> awaitJoin(Member member, long nowMs) {
    if (member.awaitingJoin != null) {
      member.awaitingJoin.complete(JoinResult.error(Errors.UNKNOWN_MEMBER_ID, member.memberId));
    }
    member.awaitingJoin = new CompletableFuture<>();
    member.sessionDeadlineMs = nowMs + member.sessionTimeoutMs;
    CompletableFuture<JoinResult> joined = member.awaitingJoin;
    if (state != State.PREPARING_REBALANCE) {
      prepareRebalance(nowMs);
    }
    maybeCompleteJoin(nowMs);
    return joined;
  }

  private void prepareRebalance(long nowMs) {
    joinNotBeforeMs = state == State.EMPTY ? nowMs + initialRebalanceDelayMs : nowMs;
    if (state == State.COMPLETING_REBALANCE) {
      members.values().forEach(m -> fail(m, Errors.REBALANCE_IN_PROGRESS));
    }
    state = State.PREPARING_REBALANCE;
    int timeout = members.values().stream().mapToInt(m -> m.rebalanceTimeoutMs).max().orElse(0);
    rebalanceDeadlineMs = nowMs + timeout;
  }

  private void maybeCompleteJoin(long nowMs) {
    if (state != State.PREPARING_REBALANCE || nowMs < joinNotBeforeMs) {
      return;
    }
    boolean allJoined = members.values().stream().allMatch(m -> m.awaitingJoin != null);
    if ((allJoined && pendingMembers.isEmpty()) || nowMs >= rebalanceDeadlineMs) {
      completeJoin(nowMs);
    }
  }

  private void completeJoin(long nowMs) {
    members.values().stream()
        .filter(m -> m.awaitingJoin == null)
        .map(m -> m.memberId)
        .toList()
        .forEach(this::remove);
    pendingMembers.clear();
    generation++;
    rebalanceDeadlineMs = Long.MAX_VALUE;
    if (members.isEmpty()) {
      state = State.EMPTY;
      protocolName = null;
      leaderId = null;
      emptySinceMs = nowMs;
      return;
    }
    protocolName = selectProtocol();
    if (leaderId == null || !members.containsKey(leaderId)) {
      leaderId = members.keySet().iterator().next();
    }
    state = State.COMPLETING_REBALANCE;
    for (Member member : members.values()) {
      member.sessionDeadlineMs = nowMs + member.sessionTimeoutMs;
      CompletableFuture<JoinResult> joined = member.awaitingJoin;
      member.awaitingJoin = null;
      joined.complete(result(member));
    }
  }

  /** The common protocol that is the first choice of the most members, ties to the earliest. */
  private String selectProtocol() {
    List<String> candidates = candidates();
    Map<String, Long> votes =
        members.values().stream()
            .map(
                m ->
                    m.protocols.stream()
                        .map(Protocol::name)
                        .filter(candidates::contains)
                        .findFirst())
            .flatMap(Optional::stream)
            .collect(Collectors.groupingBy(name -> name, Collectors.counting()));
    return candidates.stream()
        .max((a, b) -> Long.compare(votes.getOrDefault(a, 0L), votes.getOrDefault(b, 0L)))
        .orElseThrow();
  }

  private JoinResult result(Member member) {
    List<JoinedMember> all =
        member.memberId.equals(leaderId)
            ? members.values().stream()
                .map(m -> new JoinedMember(m.memberId, m.groupInstanceId, m.metadata(protocolName)))
                .toList()
            : List.of();
    return new JoinResult(
        Errors.NONE, generation, protocolType, protocolName, leaderId, member.memberId, all);
  }

  /**
   * A SyncGroup: the leader's carries every member's assignment. {@code protocolType} and {@code
   * protocolName}, sent from v5, must match the group's.
   */
  public CompletableFuture<SyncResult> sync(
      String memberId,
      String groupInstanceId,
      int generationId,
      String protocolType,
      String protocolName,
      Map<String, byte[]> assignments,
      long nowMs) {
    Member member = members.get(memberId);
    Errors error = check(member, groupInstanceId, generationId);
    if (error == Errors.NONE
        && ((protocolType != null && !protocolType.equals(this.protocolType))
            || (protocolName != null
                && this.protocolName != null
                && !protocolName.equals(this.protocolName)))) {
      error = Errors.INCONSISTENT_GROUP_PROTOCOL;
    }
    if (error != Errors.NONE) {
      return CompletableFuture.completedFuture(SyncResult.error(error));
    }
    if (state == State.PREPARING_REBALANCE) {
      return CompletableFuture.completedFuture(SyncResult.error(Errors.REBALANCE_IN_PROGRESS));
    }
    member.sessionDeadlineMs = nowMs + member.sessionTimeoutMs;
    if (state == State.STABLE) {
      return CompletableFuture.completedFuture(synced(member));
    }
    member.awaitingSync = new CompletableFuture<>();
    CompletableFuture<SyncResult> synced = member.awaitingSync;
    if (memberId.equals(leaderId)) {
      for (Member m : members.values()) {
        m.assignment = assignments.getOrDefault(m.memberId, new byte[0]);
      }
      state = State.STABLE;
      for (Member m : members.values()) {
        if (m.awaitingSync != null) {
          CompletableFuture<SyncResult> waiting = m.awaitingSync;
          m.awaitingSync = null;
          waiting.complete(synced(m));
        }
      }
    }
    return synced;
  }

  private SyncResult synced(Member member) {
    return new SyncResult(Errors.NONE, protocolType, protocolName, member.assignment);
  }

  public Errors heartbeat(String memberId, String groupInstanceId, int generationId, long nowMs) {
    Member member = members.get(memberId);
    Errors error = check(member, groupInstanceId, generationId);
    if (error != Errors.NONE) {
      return error;
    }
    member.sessionDeadlineMs = nowMs + member.sessionTimeoutMs;
    return state == State.PREPARING_REBALANCE ? Errors.REBALANCE_IN_PROGRESS : Errors.NONE;
  }

  private Errors check(Member member, String groupInstanceId, int generationId) {
    if (member == null) {
      return Errors.UNKNOWN_MEMBER_ID;
    }
    if (groupInstanceId != null && !member.memberId.equals(staticMembers.get(groupInstanceId))) {
      return Errors.FENCED_INSTANCE_ID;
    }
    return generationId == generation ? Errors.NONE : Errors.ILLEGAL_GENERATION;
  }

  /**
   * Whether a member may commit offsets: any member of the current generation, outside the wait for
   * the leader's assignments; or anyone with generation -1 while the group is empty (an admin
   * client, or a consumer that assigns its partitions itself).
   */
  public Errors validateOffsetCommit(String memberId, String groupInstanceId, int generationId) {
    if (generationId < 0 && state == State.EMPTY) {
      return Errors.NONE;
    }
    Errors error = check(members.get(memberId), groupInstanceId, generationId);
    if (error != Errors.NONE) {
      return error;
    }
    return state == State.COMPLETING_REBALANCE ? Errors.REBALANCE_IN_PROGRESS : Errors.NONE;
  }

  /** This coordinator no longer serves the group: whoever waits is told to find the new one. */
  public void unload() {
    members.values().forEach(m -> fail(m, Errors.NOT_COORDINATOR));
  }

  /** A LeaveGroup for one member, by member id or, for a static member, by instance id. */
  public Errors leave(String memberId, String groupInstanceId, long nowMs) {
    String id = groupInstanceId == null ? memberId : staticMembers.get(groupInstanceId);
    if (id == null || !members.containsKey(id)) {
      return Errors.UNKNOWN_MEMBER_ID;
    }
    if (groupInstanceId != null && !memberId.isEmpty() && !memberId.equals(id)) {
      return Errors.FENCED_INSTANCE_ID;
    }
    fail(members.get(id), Errors.UNKNOWN_MEMBER_ID);
    remove(id);
    rebalanceAfterLoss(nowMs);
    return Errors.NONE;
  }

  private void remove(String memberId) {
    Member removed = members.remove(memberId);
    if (removed != null && removed.groupInstanceId != null) {
      staticMembers.remove(removed.groupInstanceId, memberId);
    }
  }

  private void fail(Member member, Errors error) {
    if (member.awaitingJoin != null) {
      member.awaitingJoin.complete(JoinResult.error(error, member.memberId));
      member.awaitingJoin = null;
    }
    if (member.awaitingSync != null) {
      member.awaitingSync.complete(SyncResult.error(error));
      member.awaitingSync = null;
    }
  }

  private void rebalanceAfterLoss(long nowMs) {
    if (state == State.STABLE || state == State.COMPLETING_REBALANCE) {
      prepareRebalance(nowMs);
    }
    maybeCompleteJoin(nowMs);
  }

  /** Expires sessions and pending member ids, and ends a rebalance whose time came. */
  public void tick(long nowMs) {
    pendingMembers.values().removeIf(expiry -> expiry <= nowMs);
    List<String> expired =
        members.values().stream()
            .filter(m -> m.awaitingJoin == null && m.sessionDeadlineMs <= nowMs)
            .map(m -> m.memberId)
            .toList();
    for (String memberId : expired) {
      fail(members.get(memberId), Errors.UNKNOWN_MEMBER_ID);
      remove(memberId);
    }
    if (!expired.isEmpty()) {
      rebalanceAfterLoss(nowMs);
    }
    maybeCompleteJoin(nowMs);
  }

  /** When {@link #tick} next has something to do. */
  public long nextDeadlineMs() {
    long next = Long.MAX_VALUE;
    for (Member member : members.values()) {
      if (member.awaitingJoin == null) {
        next = Math.min(next, member.sessionDeadlineMs);
      }
    }
    for (long expiry : pendingMembers.values()) {
      next = Math.min(next, expiry);
    }
    if (state == State.PREPARING_REBALANCE) {
      boolean allJoined = members.values().stream().allMatch(m -> m.awaitingJoin != null);
      long joinAt = allJoined && pendingMembers.isEmpty() ? joinNotBeforeMs : rebalanceDeadlineMs;
      next = Math.min(next, Math.max(joinNotBeforeMs, joinAt));
    }
    return next;
  }
}
