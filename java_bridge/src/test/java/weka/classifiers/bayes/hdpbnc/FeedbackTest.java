package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import javax.swing.SwingUtilities;

import org.junit.jupiter.api.Test;

/**
 * Where messages go: a training thread made by a Weka panel (an anonymous Thread inside an object that
 * holds a weka.gui.Logger, as the Explorer's ClassifierPanel is) reports to that logger, through Swing's
 * event thread; any other thread reports on the console. ExplorerStopIT checks the real Explorer.
 */
class FeedbackTest {

  /** Records what a panel would show. */
  static final class RecordingLogger implements weka.gui.Logger {
    final List<String> logged = new ArrayList<>();
    final List<String> status = new ArrayList<>();
    final List<Boolean> onEventThread = new ArrayList<>();

    @Override
    public void logMessage(String message) {
      logged.add(message);
      onEventThread.add(SwingUtilities.isEventDispatchThread());
    }

    @Override
    public void statusMessage(String message) {
      status.add(message);
      onEventThread.add(SwingUtilities.isEventDispatchThread());
    }
  }

  /** Like ClassifierPanel: holds a logger and makes the training thread as an anonymous inner class. */
  static final class Panel {
    protected weka.gui.Logger m_Log = new RecordingLogger();

    Thread trainingThread(Runnable body) {
      return new Thread() {
        @Override
        public void run() {
          body.run();
        }
      };
    }
  }

  @Test
  void aPanelsTrainingThreadReportsToThePanelThroughTheEventThread() throws Exception {
    Panel panel = new Panel();
    Feedback[] fb = new Feedback[1];
    Thread t = panel.trainingThread(() -> {
      fb[0] = Feedback.forThread(Thread.currentThread(), false);
      fb[0].log("job x published");
      fb[0].status("sampling, iteration 10 of 100", true);
    });
    t.start();
    t.join();
    assertTrue(fb[0].toPanel());
    fb[0].flush();
    SwingUtilities.invokeAndWait(() -> {
    });
    RecordingLogger log = (RecordingLogger) panel.m_Log;
    assertEquals(List.of("HDPBayesNet: job x published"), log.logged);
    assertEquals(List.of("HDPBayesNet: sampling, iteration 10 of 100"), log.status);
    assertFalse(log.onEventThread.contains(false), "a panel was touched outside the event thread");
  }

  @Test
  void otherThreadsReportOnTheConsole() throws Exception {
    Feedback fb = Feedback.forThread(Thread.currentThread(), false);
    assertFalse(fb.toPanel());
    PrintStream err = System.err;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    System.setErr(new PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      fb.log("starting the hdp-bnc daemon");
      fb.status("sampling, iteration 1 of 100", false); // throttled: not for the console
      fb.status("sampling, iteration 50 of 100", true);
      fb.flush();
    } finally {
      System.setErr(err);
    }
    String text = out.toString(StandardCharsets.UTF_8);
    assertTrue(text.contains("HDPBayesNet: starting the hdp-bnc daemon"), text);
    assertTrue(text.contains("HDPBayesNet: sampling, iteration 50 of 100"), text);
    assertFalse(text.contains("iteration 1 of 100"), text);
  }
}
