package io.tidelog.broker.protocol;

import io.tidelog.broker.network.AuthenticationMetrics;
import io.tidelog.broker.network.ClientChannel;
import io.tidelog.broker.network.RequestProcessor;
import io.tidelog.broker.security.ListenerSecurity;
import io.vertx.core.Future;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.security.sasl.SaslException;
import javax.security.sasl.SaslServer;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.network.ByteBufferSend;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.security.auth.AuthenticationContext;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.PlaintextAuthenticationContext;
import org.apache.kafka.common.security.auth.SaslAuthenticationContext;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.auth.SslAuthenticationContext;
import org.apache.kafka.common.security.authenticator.SaslInternalConfigs;

/**
 * One client connection as the protocol sees it: who the client is, and on a SASL listener the
 * authentication that must come first, as Kafka's {@code SaslServerAuthenticator} runs it.
 *
 * <p>On PLAINTEXT the principal is {@code User:ANONYMOUS}; on SSL the one the listener's principal
 * builder makes of the client's certificate ({@code ssl.principal.mapping.rules}), or ANONYMOUS
 * without one. On SASL_PLAINTEXT and SASL_SSL only ApiVersions, SaslHandshake and SaslAuthenticate
 * are answered until a mechanism completes; anything else closes the connection, as in Kafka. A
 * failed authentication is answered {@code SASL_AUTHENTICATION_FAILED} and the connection closed.
 * With {@code connections.max.reauth.ms} the session lasts that long (KIP-368): the client
 * authenticates again with a new SaslHandshake, as the same principal, or its next request after
 * the session ends closes the connection.
 *
 * <p>Event loop only: SASL exchanges are answered where they arrive, in order, as the SCRAM and
 * PLAIN servers compute over credentials already in memory.
 */
final class ClientSession implements RequestProcessor {
  private enum State {
    /** A SASL listener's connection before its SaslHandshake. */
    HANDSHAKE,
    /** SaslAuthenticate exchanges with {@link #saslServer}. */
    AUTHENTICATE,
    /** After a v0 SaslHandshake: bare SASL tokens in size-prefixed frames, as before KIP-152. */
    AUTHENTICATE_TOKENS,
    /** Authenticated, or on a listener that needs no SASL. */
    READY,
    /** Told to close after the responses written. */
    FAILED
  }

  private final RequestDispatcher dispatcher;
  private final ClientChannel channel;
  private final ListenerSecurity security;
  private final AuthenticationMetrics metrics;
  private final Supplier<Long> clockMs;
  private State state;
  private KafkaPrincipal principal;
  private SaslServer saslServer;
  private long sessionExpiresAtMs = Long.MAX_VALUE;
  private long muteMs;
  private boolean oneRequestAtATime;

  /** The broker that fetched as a follower on this connection, or -1. */
  private int follower = -1;

  ClientSession(
      RequestDispatcher dispatcher,
      ClientChannel channel,
      Function<String, ListenerSecurity> listeners,
      AuthenticationMetrics metrics,
      Supplier<Long> clockMs) {
    this.dispatcher = dispatcher;
    this.channel = channel;
    this.security = listeners.apply(channel.listener().value());
    this.metrics = metrics;
    this.clockMs = clockMs;
    SecurityProtocol protocol = channel.protocol();
    if (protocol == SecurityProtocol.SASL_PLAINTEXT || protocol == SecurityProtocol.SASL_SSL) {
      state = State.HANDSHAKE;
    } else {
      state = State.READY;
      String listener = channel.listener().value();
      AuthenticationContext context =
          channel.sslSession().isPresent()
              ? new SslAuthenticationContext(
                  channel.sslSession().get(), channel.clientAddress(), listener)
              : new PlaintextAuthenticationContext(channel.clientAddress(), listener);
      principal = security.principals().build(context);
    }
  }

  @Override
  public Future<Optional<Send>> process(ByteBuffer frame) {
    if (state == State.READY) {
      boolean reauthentication =
          isSaslListener()
              && frame.remaining() >= 2
              && frame.getShort(0) == ApiKeys.SASL_HANDSHAKE.id;
      if (!reauthentication) {
        if (clockMs.get() >= sessionExpiresAtMs) {
          return Future.failedFuture(
              "the session of " + principal + " ended (connections.max.reauth.ms)");
        }
        return dispatcher.process(frame, this);
      }
      state = State.HANDSHAKE;
    }
    if (state == State.FAILED) {
      return Future.failedFuture("a request after a failed authentication");
    }
    return authenticate(frame);
  }

  private boolean isSaslListener() {
    return channel.protocol() == SecurityProtocol.SASL_PLAINTEXT
        || channel.protocol() == SecurityProtocol.SASL_SSL;
  }

  /** Broker {@code replicaId} fetches on this connection as a follower. */
  void fetchedBy(int replicaId) {
    follower = replicaId;
  }

  @Override
  public void closed() {
    if (follower >= 0) {
      dispatcher.followerGone(follower);
    }
  }

  /** Mutes the connection for {@code ms} after the response now being written (KIP-219). */
  void mute(long ms) {
    muteMs = Math.max(muteMs, ms);
  }

  /** Serves the connection's requests one at a time from now, or pipelined again. */
  void oneRequestAtATime(boolean one) {
    oneRequestAtATime = one;
  }

  @Override
  public boolean oneRequestAtATime() {
    return oneRequestAtATime;
  }

  @Override
  public long takeMuteMs() {
    long ms = muteMs;
    muteMs = 0;
    return ms;
  }

  @Override
  public int requestMaxBytes() {
    return state == State.READY ? Integer.MAX_VALUE : security.saslServerMaxReceiveBytes();
  }

  @Override
  public boolean closeAfterResponses() {
    return state == State.FAILED;
  }

  /** The request context of a request of this connection, as Kafka's handlers get it. */
  RequestContext contextOf(RequestHeader header) {
    return new RequestContext(
        header,
        channel.connectionId(),
        channel.clientAddress(),
        Optional.of(channel.clientPort()),
        principal,
        channel.listener(),
        channel.protocol(),
        ClientInformation.EMPTY,
        false);
  }

  /** One request of a SASL listener's connection before it is authenticated. */
  private Future<Optional<Send>> authenticate(ByteBuffer frame) {
    if (state == State.AUTHENTICATE_TOKENS) {
      return token(frame);
    }
    if (frame.remaining() < 4) {
      return Future.failedFuture("a frame too short for a request header during authentication");
    }
    ApiKeys api = ApiKeys.hasId(frame.getShort(0)) ? ApiKeys.forId(frame.getShort(0)) : null;
    if (api == ApiKeys.API_VERSIONS) {
      return dispatcher.process(frame, this);
    }
    if (api != (state == State.HANDSHAKE ? ApiKeys.SASL_HANDSHAKE : ApiKeys.SASL_AUTHENTICATE)) {
      return Future.failedFuture(
          "a " + (api == null ? "request of an unknown API" : api) + " request during " + state);
    }
    RequestHeader header;
    try {
      header = RequestHeader.parse(frame);
    } catch (RuntimeException e) {
      return Future.failedFuture("a malformed request header during authentication: " + e);
    }
    if (!SupportedApis.isServed(api, header.apiVersion())) {
      return Future.failedFuture(api + " v" + header.apiVersion() + " is not served");
    }
    AbstractResponse response;
    try {
      response =
          api == ApiKeys.SASL_HANDSHAKE
              ? handshake(
                  SaslHandshakeRequest.parse(new ByteBufferAccessor(frame), header.apiVersion()),
                  header.apiVersion())
              : exchange(
                  SaslAuthenticateRequest.parse(new ByteBufferAccessor(frame), header.apiVersion()),
                  header.apiVersion());
    } catch (RuntimeException e) {
      return Future.failedFuture("a malformed " + api + " request: " + e);
    }
    return Future.succeededFuture(
        Optional.of(response.toSend(header.toResponseHeader(), header.apiVersion())));
  }

  private SaslHandshakeResponse handshake(SaslHandshakeRequest request, short version) {
    List<String> enabled = security.saslMechanisms();
    String mechanism = request.data().mechanism();
    SaslHandshakeResponseData data = new SaslHandshakeResponseData().setMechanisms(enabled);
    // a re-authentication keeps the mechanism of the first, as in Kafka
    boolean sameMechanism = saslServer == null || saslServer.getMechanismName().equals(mechanism);
    if (!enabled.contains(mechanism) || !sameMechanism) {
      fail();
      return new SaslHandshakeResponse(data.setErrorCode(Errors.UNSUPPORTED_SASL_MECHANISM.code()));
    }
    saslServer = security.saslServer(mechanism);
    state = version == 0 ? State.AUTHENTICATE_TOKENS : State.AUTHENTICATE;
    return new SaslHandshakeResponse(data.setErrorCode(Errors.NONE.code()));
  }

  /**
   * A bare SASL token after a v0 SaslHandshake, answered with the bare challenge; a failure closes
   * the connection without an answer, as Kafka's v0 exchange does.
   */
  private Future<Optional<Send>> token(ByteBuffer frame) {
    byte[] response = new byte[frame.remaining()];
    frame.get(response);
    byte[] challenge;
    try {
      challenge = saslServer.evaluateResponse(response);
    } catch (SaslAuthenticationException | SaslException e) {
      fail();
      return Future.failedFuture(
          "SASL authentication with " + saslServer.getMechanismName() + " failed");
    }
    if (saslServer.isComplete() && complete() != null) {
      fail();
      return Future.failedFuture("a re-authentication as another principal");
    }
    return Future.succeededFuture(
        challenge == null
            ? Optional.empty()
            : Optional.of(ByteBufferSend.sizePrefixed(ByteBuffer.wrap(challenge))));
  }

  private SaslAuthenticateResponse exchange(SaslAuthenticateRequest request, short version) {
    byte[] challenge;
    try {
      challenge = saslServer.evaluateResponse(request.data().authBytes());
    } catch (SaslAuthenticationException | SaslException e) {
      return authenticationFailed(
          e instanceof SaslAuthenticationException
              ? e.getMessage()
              : "Authentication failed during authentication due to invalid credentials with SASL mechanism "
                  + saslServer.getMechanismName());
    }
    SaslAuthenticateResponseData data =
        new SaslAuthenticateResponseData()
            .setErrorCode(Errors.NONE.code())
            .setAuthBytes(challenge == null ? new byte[0] : challenge);
    if (saslServer.isComplete()) {
      String refused = complete();
      if (refused != null) {
        return authenticationFailed(refused);
      }
      long reauthMs = security.connectionsMaxReauthMs();
      if (reauthMs > 0 && version >= 1) {
        // as in Kafka, a credential that expires sooner (an OAUTHBEARER token) ends it sooner
        long nowMs = clockMs.get();
        long expiresAtMs = nowMs + reauthMs;
        if (saslServer.getNegotiatedProperty(
                SaslInternalConfigs.CREDENTIAL_LIFETIME_MS_SASL_NEGOTIATED_PROPERTY_KEY)
            instanceof Long credentialExpiresAtMs) {
          expiresAtMs = Math.min(expiresAtMs, credentialExpiresAtMs);
        }
        data.setSessionLifetimeMs(Math.max(0, expiresAtMs - nowMs));
        sessionExpiresAtMs = expiresAtMs;
      }
    }
    return new SaslAuthenticateResponse(data);
  }

  /**
   * Takes the principal of the completed exchange; or, on a re-authentication as someone else,
   * returns why not.
   */
  private String complete() {
    KafkaPrincipal authenticated =
        security
            .principals()
            .build(
                new SaslAuthenticationContext(
                    saslServer,
                    channel.protocol(),
                    channel.clientAddress(),
                    channel.listener().value(),
                    channel.sslSession()));
    if (principal != null && !principal.equals(authenticated)) {
      return "Cannot change principals during re-authentication";
    }
    principal = authenticated;
    metrics.succeeded(channel.listener().value());
    state = State.READY;
    return null;
  }

  private SaslAuthenticateResponse authenticationFailed(String message) {
    fail();
    return new SaslAuthenticateResponse(
        new SaslAuthenticateResponseData()
            .setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code())
            .setErrorMessage(message));
  }

  private void fail() {
    metrics.failed(channel.listener().value());
    state = State.FAILED;
  }
}
