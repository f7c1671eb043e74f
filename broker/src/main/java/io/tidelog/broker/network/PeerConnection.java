package io.tidelog.broker.network;

import io.netty.handler.ssl.SslHandler;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.parsetools.RecordParser;
import java.nio.ByteBuffer;
import javax.security.sasl.SaslClient;
import javax.security.sasl.SaslException;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;

/**
 * A connection from this broker to another one, as a follower fetching from its leader: one request
 * at a time, framed as Kafka frames them and encoded by kafka-clients. Responses larger than {@code
 * maxResponseBytes} close the connection. On an SSL or SASL_SSL inter-broker listener the bytes
 * pass through a Netty {@code SslHandler} with this broker's client engine; on a SASL listener the
 * connection authenticates before its first request.
 *
 * <p>Threads: {@link #send} may be called from any thread; the connection's state is touched only
 * on its event loop.
 */
public final class PeerConnection {
  /** The most SaslAuthenticate round trips of one authentication (SCRAM takes two). */
  private static final int SASL_ROUNDS_MAX = 8;

  private final NetClient client;
  private final NetSocket socket;
  private final String clientId;
  private final int maxResponseBytes;
  private int correlationId;
  private RequestHeader inFlight;
  private Promise<AbstractResponse> pending;
  private int expectedSize = -1;
  private final Context context;

  private PeerConnection(
      NetClient client, NetSocket socket, String clientId, int maxResponseBytes) {
    this.context = Vertx.currentContext();
    this.client = client;
    this.socket = socket;
    this.clientId = clientId;
    this.maxResponseBytes = maxResponseBytes;
  }

  /**
   * Connects to {@code host:port} of {@code listener}; on an SSL listener the future completes once
   * the TLS handshake is done.
   */
  public static Future<PeerConnection> connect(
      Vertx vertx,
      PeerListener listener,
      String host,
      int port,
      String clientId,
      int connectTimeoutMs,
      int maxResponseBytes) {
    NetClient client =
        vertx.createNetClient(
            new NetClientOptions().setConnectTimeout(connectTimeoutMs).setTcpNoDelay(true));
    return client
        .connect(port, host)
        .compose(socket -> maybeHandshake((NetSocketInternal) socket, listener, host, port))
        .map(
            socket -> {
              PeerConnection connection =
                  new PeerConnection(client, socket, clientId, maxResponseBytes);
              connection.start();
              return connection;
            })
        .compose(
            connection ->
                listener.saslClients() == null
                    ? Future.succeededFuture(connection)
                    : connection
                        .authenticate(listener, host)
                        .map(connection)
                        .onFailure(e -> connection.close()))
        .onFailure(e -> client.close());
  }

  /**
   * Authenticates with the listener's inter-broker mechanism: SaslHandshake v1, then
   * SaslAuthenticate exchanges until the client completes. A session the leader ends ({@code
   * connections.max.reauth.ms}) closes the connection, and the follower connects again.
   */
  private Future<Void> authenticate(PeerListener listener, String host) {
    SaslClient sasl = listener.saslClients().apply(host);
    return send(new SaslHandshakeRequest.Builder(
                new SaslHandshakeRequestData().setMechanism(listener.saslMechanism()))
            .build((short) 1))
        .compose(
            handshake -> {
              short error = ((SaslHandshakeResponse) handshake).data().errorCode();
              if (error != 0) {
                return Future.failedFuture(
                    "the leader does not take "
                        + listener.saslMechanism()
                        + " (error "
                        + error
                        + ")");
              }
              try {
                byte[] first =
                    sasl.hasInitialResponse() ? sasl.evaluateChallenge(new byte[0]) : new byte[0];
                return exchange(sasl, first, 1);
              } catch (SaslException e) {
                return Future.failedFuture(e);
              }
            });
  }

  private Future<Void> exchange(SaslClient sasl, byte[] token, int round) {
    return send(new SaslAuthenticateRequest.Builder(
                new SaslAuthenticateRequestData().setAuthBytes(token))
            .build((short) 2))
        .compose(
            answer -> {
              SaslAuthenticateResponse response = (SaslAuthenticateResponse) answer;
              if (response.data().errorCode() != 0) {
                return Future.failedFuture(
                    "authentication to the leader failed: " + response.errorMessage());
              }
              try {
                byte[] next =
                    sasl.isComplete() ? null : sasl.evaluateChallenge(response.saslAuthBytes());
                if (sasl.isComplete()) {
                  return Future.succeededFuture();
                }
                if (round == SASL_ROUNDS_MAX) {
                  return Future.failedFuture(
                      "authentication took more than " + SASL_ROUNDS_MAX + " rounds");
                }
                return exchange(sasl, next, round + 1);
              } catch (SaslException e) {
                return Future.failedFuture(e);
              }
            });
  }

  private static Future<NetSocket> maybeHandshake(
      NetSocketInternal socket, PeerListener listener, String host, int port) {
    if (listener.sslEngines() == null) {
      return Future.succeededFuture(socket);
    }
    SslHandler tls = new SslHandler(listener.sslEngines().apply(host, port));
    Promise<NetSocket> handshaken = Promise.promise();
    socket.channelHandlerContext().pipeline().addFirst("tls", tls);
    tls.handshakeFuture()
        .addListener(
            done -> {
              if (done.isSuccess()) {
                handshaken.complete(socket);
              } else {
                socket.close();
                handshaken.fail(done.cause());
              }
            });
    return handshaken.future();
  }

  private void start() {
    RecordParser parser = RecordParser.newFixed(4);
    parser.handler(
        frame -> {
          if (expectedSize < 0) {
            expectedSize = frame.getInt(0);
            if (expectedSize < 0 || expectedSize > maxResponseBytes) {
              fail(new IllegalStateException("Response of " + expectedSize + " bytes refused"));
              socket.close();
              return;
            }
            parser.fixedSizeMode(expectedSize);
          } else {
            expectedSize = -1;
            parser.fixedSizeMode(4);
            complete(frame);
          }
        });
    socket.handler(parser);
    // an IOException, as a reset is: the peer's end of the connection went away
    socket.closeHandler(v -> fail(new java.net.SocketException("Connection closed by the peer")));
    socket.exceptionHandler(this::fail);
  }

  /** Sends {@code request}; the previous one must have been answered. */
  public Future<AbstractResponse> send(AbstractRequest request) {
    Promise<AbstractResponse> promise = Promise.promise();
    context.runOnContext(v -> write(request, promise));
    return promise.future();
  }

  private void write(AbstractRequest request, Promise<AbstractResponse> promise) {
    if (pending != null) {
      promise.fail(new IllegalStateException("A request is already in flight"));
      return;
    }
    inFlight = new RequestHeader(request.apiKey(), request.version(), clientId, ++correlationId);
    ByteBuffer body = request.serializeWithHeader(inFlight);
    Buffer frame = Buffer.buffer(4 + body.remaining()).appendInt(body.remaining());
    frame.appendBytes(body.array(), body.arrayOffset() + body.position(), body.remaining());
    pending = promise;
    socket.write(frame).onFailure(this::fail);
  }

  private void complete(Buffer frame) {
    Promise<AbstractResponse> promise = pending;
    pending = null;
    if (promise == null) {
      return;
    }
    try {
      promise.complete(AbstractResponse.parseResponse(ByteBuffer.wrap(frame.getBytes()), inFlight));
    } catch (RuntimeException e) {
      promise.fail(e);
      socket.close();
    }
  }

  private void fail(Throwable error) {
    Promise<AbstractResponse> promise = pending;
    pending = null;
    if (promise != null) {
      promise.tryFail(error);
    }
  }

  public Future<Void> close() {
    return socket.close().eventually(client::close);
  }
}
